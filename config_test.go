package sn_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sngen/sn"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// ignoreSource ignores where a Config was read from.
var ignoreSource = cmpopts.IgnoreUnexported(sn.Config{})

func TestParseConfig(t *testing.T) {
	want := &sn.Config{
		Store: sn.SequenceConfig{Backend: "bolt", Path: "sn.db", Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: "30s", FetchTimeout: "2s"},
		Templates: map[string]sn.TemplateConfig{
			"orders":  {Template: "SN-@<seq, width=8>", Floor: 500},
			"tickets": {Template: "QJ@<seq, width=6>", Sequence: sn.SequenceConfig{Backend: "redis", URL: "redis://localhost:6379/0", Prefix: "t:"}},
		},
	}
	tests := []struct {
		name, format, data string
	}{
		{"yaml", "yaml", `
store:
  backend: bolt
  path: sn.db
  step: 100
  min_step: 10
  max_step: 1000
  prefetch: 0.5
  target: 30s
  fetch_timeout: 2s
templates:
  orders:
    template: "SN-@<seq, width=8>"
    floor: 500
  tickets:
    template: QJ@<seq, width=6>
    sequence:
      backend: redis
      url: redis://localhost:6379/0
      prefix: "t:"
`},
		{"yml upper case", "YML", `
store: {backend: bolt, path: sn.db, step: 100, min_step: 10, max_step: 1000, prefetch: 0.5, target: 30s, fetch_timeout: 2s}
templates:
  orders: {template: "SN-@<seq, width=8>", floor: 500}
  tickets: {template: "QJ@<seq, width=6>", sequence: {backend: redis, url: "redis://localhost:6379/0", prefix: "t:"}}
`},
		{"json", "json", `{
  "store": {"backend": "bolt", "path": "sn.db", "step": 100, "min_step": 10, "max_step": 1000,
            "prefetch": 0.5, "target": "30s", "fetch_timeout": "2s"},
  "templates": {
    "orders": {"template": "SN-@<seq, width=8>", "floor": 500},
    "tickets": {"template": "QJ@<seq, width=6>",
                "sequence": {"backend": "redis", "url": "redis://localhost:6379/0", "prefix": "t:"}}
  }
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sn.ParseConfig([]byte(tt.data), tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
				t.Errorf("ParseConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, format, data, want string
	}{
		{"json unknown field", "json", "{\n  \"templates\": {\n    \"a\": {\"template\": \"x@<seq>\", \"flor\": 1}\n  }\n}",
			`sn: config: line 3: template "a": unknown field "flor" (known: floor, sequence, template)`},
		{"json unknown top-level field", "json", `{"template": {}}`,
			`sn: config: line 1: unknown field "template" (known: store, templates)`},
		{"json unknown field after a template named like it", "json", "{\"templates\": {\"flor\": {\"template\": \"x@<seq>\"},\n\"a\": {\"Template\": \"x\", \"sequence\": {\"steps\": [1]}}}}",
			`sn: config: line 2: template "a": unknown field "sequence.steps" (known: backend, fetch_timeout, max_step, min_step, path, prefetch, prefix, step, target, url)`},
		{"json wrong type", "json", "{\"templates\": {\n\"a\": {\"floor\": \"ten\"}}}",
			`sn: config: line 2: template "a": floor: want a whole number, found "ten"`},
		{"json fraction", "json", "{\"store\": {\"step\": 1.5}}",
			`sn: config: line 1: store.step: want a whole number, found 1.5`},
		{"json object for a string", "json", "{\"templates\": {\"a\": {\"template\": {\"x\": 1}}}}",
			`sn: config: line 1: template "a": template: want a string, found an object`},
		{"json template as a string", "json", "{\"templates\": {\n\"a\": \"A@<seq>\"}}",
			`sn: config: line 2: template "a": want an object with the fields floor, sequence, template, found "A@<seq>"`},
		{"json not an object", "json", "[1]",
			`sn: config: line 1: want an object with the fields store, templates, found a list`},
		{"json key twice", "json", "{\"templates\": {\"a\": {\"template\": \"A@<seq>\",\n\"Template\": \"B@<seq>\"}}}",
			`sn: config: line 2: template "a": template: given twice (first at line 1)`},
		{"json template twice", "json", "{\"templates\": {\"a\": {\"template\": \"A@<seq>\"},\n\"a\": {\"template\": \"B@<seq>\"}}}",
			`sn: config: line 2: template "a": defined twice (first at line 1)`},
		{"json syntax", "json", "{\"templates\": {\n\"a\": {,}}}",
			`sn: config: line 2: invalid character ',' looking for beginning of object key string`},
		{"json empty", "json", "  ", `sn: config: empty document`},
		{"json two values", "json", `{} {}`, `sn: config: line 1: data after the top-level object`},
		{"yaml unknown field", "yaml", "templates:\n  a:\n    template: x@<seq>\n    flor: 1\n",
			`sn: config: line 4: template "a": unknown field "flor" (known: floor, sequence, template)`},
		{"yaml unknown fields", "yaml", "store:\n  backnd: bolt\n  steps: 5\n",
			"sn: config: line 2: unknown field \"store.backnd\" (known: backend, fetch_timeout, max_step, min_step, path, prefetch, prefix, step, target, url)\n" +
				`sn: config: line 3: unknown field "store.steps" (known: backend, fetch_timeout, max_step, min_step, path, prefetch, prefix, step, target, url)`},
		{"yaml wrong type", "yaml", "templates:\n  a:\n    floor: ten\n",
			`sn: config: line 3: template "a": floor: want a whole number, found "ten"`},
		{"yaml wrong types in a flow mapping", "yaml", "templates:\n  a: {template: A@<seq>, floor: tenthousand, sequence: {step: [1]}}\n",
			"sn: config: line 2: template \"a\": floor: want a whole number, found \"tenthousand\"\n" +
				`sn: config: line 2: template "a": sequence.step: want a whole number, found a list`},
		{"yaml fraction", "yaml", "templates:\n  a:\n    floor: 1.5\n",
			`sn: config: line 3: template "a": floor: want a whole number, found 1.5`},
		{"yaml template as a string", "yaml", "templates:\n  a: A@<seq>\n",
			`sn: config: line 2: template "a": want a mapping with the fields floor, sequence, template, found "A@<seq>"`},
		{"yaml key twice", "yaml", "templates:\n  a:\n    template: A@<seq>\n  a:\n    template: B@<seq>\n",
			`sn: config: line 4: template "a": defined twice (first at line 2)`},
		{"yaml syntax", "yaml", "templates: [\n", `sn: config: line 1: did not find expected node content`},
		{"yaml merges that merge each other", "yaml", "templates: &x {a: &y {<<: *x}, <<: *y}\n", `sn: config: anchor 'x' value contains itself`},
		{"yaml two documents", "yaml", "templates: {}\n---\ntemplates: {}\n", `sn: config: more than one YAML document`},
		{"unknown format", "toml", "", `sn: config: unknown format "toml" (want json or yaml)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sn.ParseConfig([]byte(tt.data), tt.format)
			if err == nil {
				t.Fatalf("ParseConfig = %+v, want error %q", c, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, sn.ErrConfig) {
				t.Errorf("errors.Is(%v, ErrConfig) = false", err)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := &sn.Config{Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>"}}}
	for _, name := range []string{"c.yaml", "c.yml", "c.YAML"} {
		got, err := sn.LoadConfig(write(name, "templates:\n  a:\n    template: A@<seq>\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	got, err := sn.LoadConfig(write("c.json", `{"templates": {"a": {"template": "A@<seq>"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}

	bad := write("bad.yaml", "templates:\n  a:\n    tmpl: A\n")
	_, err = sn.LoadConfig(bad)
	if want := "sn: config: " + bad + `: line 3: template "a": unknown field "tmpl" (known: floor, sequence, template)`; err == nil || err.Error() != want {
		t.Errorf("LoadConfig(bad) = %v, want %s", err, want)
	}
	toml := write("c.toml", "")
	_, err = sn.LoadConfig(toml)
	if want := "sn: config: " + toml + `: unknown extension ".toml" (want .json, .yaml or .yml)`; err == nil || err.Error() != want {
		t.Errorf("LoadConfig(toml) = %v, want %s", err, want)
	}
	_, err = sn.LoadConfig(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, sn.ErrConfig) {
		t.Errorf("LoadConfig(missing) = %v, want ErrConfig and fs.ErrNotExist", err)
	}
}

// tpl is a config of one template in the default store.
func tpl(text string) map[string]sn.TemplateConfig {
	return map[string]sn.TemplateConfig{"orders": {Template: text}}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  sn.Config
		want []string // the joined errors, one per entry; none when valid
	}{
		{name: "valid memory", cfg: sn.Config{Templates: tpl("SN-@<seq, width=8>")}},
		{name: "valid bolt with store defaults", cfg: sn.Config{
			Store:     sn.SequenceConfig{Backend: "bolt", Path: "sn.db", Step: 10},
			Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>", Floor: 100}, "b": {Template: "B@<seq>", Sequence: sn.SequenceConfig{Step: 20, MaxStep: 40}}},
		}},
		{name: "store fields unused by a memory template are fine", cfg: sn.Config{
			Store:     sn.SequenceConfig{Path: "sn.db", URL: "redis://x", Step: 10},
			Templates: tpl("A@<seq>"),
		}},
		{name: "valid redis-strict", cfg: sn.Config{
			Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>", Sequence: sn.SequenceConfig{Backend: "redis-strict", URL: "redis://x", Path: "sn.db", Step: 5, Prefix: "p:"}}},
		}},
		{name: "no templates", want: []string{`sn: config: no templates`}},
		{name: "bad template", cfg: sn.Config{Templates: tpl("SN-@<seq, widht=8>")}, want: []string{
			"sn: config: template \"orders\": sn: template: offset 10: seq: unknown argument \"widht\" (known: key, overflow, reset, width)\n\tSN-@<seq, widht=8>\n\t          ^",
		}},
		{name: "missing template", cfg: sn.Config{Templates: tpl(" ")}, want: []string{`sn: config: template "orders": template: missing`}},
		{name: "other sequence", cfg: sn.Config{Templates: tpl("@<seq2>-@<n>")}, want: []string{
			"sn: config: template \"orders\": sn: template: offset 0: the template has no sequence part (such as @<seq>), so every number would be the same\n\t@<seq2>-@<n>\n\t^",
		}},
		{name: "bad name", cfg: sn.Config{Templates: map[string]sn.TemplateConfig{"my orders": {Template: "A@<seq>"}}}, want: []string{
			`sn: config: template "my orders": bad name: want letters, digits, "_", "-" and "."`,
		}},
		{name: "unknown backend", cfg: sn.Config{Templates: map[string]sn.TemplateConfig{"orders": {Template: "A@<seq>", Sequence: sn.SequenceConfig{Backend: "mysql"}}}}, want: []string{
			`sn: config: template "orders": sequence.backend "mysql": unknown (want memory, bolt, redis, redis-strict)`,
		}},
		{name: "unknown store backend", cfg: sn.Config{Store: sn.SequenceConfig{Backend: "sql"}, Templates: tpl("A@<seq>")}, want: []string{
			`sn: config: store.backend "sql": unknown (want memory, bolt, redis, redis-strict)`,
		}},
		{name: "bad numbers", cfg: sn.Config{Templates: map[string]sn.TemplateConfig{"orders": {Template: "A@<seq>", Floor: -1,
			Sequence: sn.SequenceConfig{Backend: "bolt", Path: "x", Step: -5, MinStep: 20, MaxStep: 10, Prefetch: 1, Target: "soon", FetchTimeout: "-1s"}}}}, want: []string{
			`sn: config: template "orders": sequence.step -5: want 1 or more (or 0 for the default)`,
			`sn: config: template "orders": sequence.min_step 20: above max_step 10`,
			`sn: config: template "orders": sequence.prefetch 1: want a share between 0 and 1, such as 0.2`,
			`sn: config: template "orders": sequence.target "soon": want a positive duration such as "1m" or "30s"`,
			`sn: config: template "orders": sequence.fetch_timeout "-1s": want a positive duration such as "1m" or "30s"`,
			`sn: config: template "orders": floor -1: want 0 (none) or more`,
		}},
		{name: "template step against store max_step", cfg: sn.Config{
			Store:     sn.SequenceConfig{Backend: "bolt", Path: "x", MaxStep: 100},
			Templates: map[string]sn.TemplateConfig{"orders": {Template: "A@<seq>", Sequence: sn.SequenceConfig{Step: 500}}},
		}, want: []string{`sn: config: template "orders": sequence.step 500: above max_step 100`}},
		{name: "bad store numbers are reported once", cfg: sn.Config{
			Store:     sn.SequenceConfig{Backend: "bolt", Path: "x", Step: -1},
			Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"}},
		}, want: []string{`sn: config: store.step -1: want 1 or more (or 0 for the default)`}},
		{name: "bolt without path", cfg: sn.Config{Store: sn.SequenceConfig{Backend: "bolt"}, Templates: tpl("A@<seq>")}, want: []string{
			`sn: config: template "orders": sequence.path: the bolt backend needs a file (set path here or in store)`,
		}},
		{name: "redis-strict without url and path", cfg: sn.Config{Store: sn.SequenceConfig{Backend: "redis-strict"}, Templates: tpl("A@<seq>")}, want: []string{
			`sn: config: template "orders": sequence.path: the redis-strict backend needs a file (set path here or in store)`,
			`sn: config: template "orders": sequence.url: the redis-strict backend needs a Redis URL (set url here or in store)`,
		}},
		{name: "fields the backend does not use", cfg: sn.Config{Templates: map[string]sn.TemplateConfig{
			"m": {Template: "M@<seq>", Sequence: sn.SequenceConfig{Step: 5, Path: "x"}},
			"r": {Template: "R@<seq>", Sequence: sn.SequenceConfig{Backend: "redis", URL: "redis://x", Path: "x"}},
			"s": {Template: "S@<seq>", Sequence: sn.SequenceConfig{Backend: "redis-strict", URL: "redis://x", Path: "x", Target: "1m"}},
		}}, want: []string{
			`sn: config: template "m": sequence.path: not used by the memory backend`,
			`sn: config: template "m": sequence.step: not used by the memory backend`,
			`sn: config: template "r": sequence.path: not used by the redis backend`,
			`sn: config: template "s": sequence.target: not used by the redis-strict backend`,
		}},
		{name: "floor on a resetting counter", cfg: sn.Config{Templates: map[string]sn.TemplateConfig{
			"daily":  {Template: "@<date>@<seq, reset=day>", Floor: 10},
			"perkey": {Template: "@<unit>-@<seq, key=unit>", Floor: 10},
			"owner":  {Template: "@<ownerKey>-@<seq>", Floor: 10},
		}}, want: []string{
			`sn: config: template "daily": floor: the counter resets every day, so there is no single counter to raise`,
			`sn: config: template "owner": floor: the template's ownerKey is given per call, so there is no single counter to raise`,
			`sn: config: template "perkey": floor: the counter key depends on unit (key=unit), so there is no single counter to raise`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want %q", tt.want)
			}
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), err.Error()); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			if !errors.Is(err, sn.ErrConfig) {
				t.Errorf("errors.Is(ErrConfig) = false")
			}
			var ce *sn.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("errors.As(*ConfigError) = false")
			}
		})
	}
}

func TestConfigErrorFields(t *testing.T) {
	cfg := sn.Config{Templates: map[string]sn.TemplateConfig{
		"a": {Template: "A@<seq, width=x>"},
		"b": {Template: "B@<seq>", Sequence: sn.SequenceConfig{Backend: "bolt", Step: 5, MinStep: 10}},
	}}
	err := cfg.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		ce := e.(*sn.ConfigError)
		got = append(got, ce.Template+" "+ce.Field)
	}
	want := []string{"a template", "b sequence.step", "b sequence.path"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Template and Field (-want +got):\n%s", diff)
	}
	if !errors.Is(err, sn.ErrTemplate) {
		t.Errorf("errors.Is(ErrTemplate) = false")
	}
	var pe *parser.Error
	if !errors.As(err, &pe) || pe.Offset != 8 {
		t.Errorf("errors.As(*parser.Error) = %v, want offset 8", pe)
	}
}

// The errors of a Config read from a file name the file and the line: the
// field's, or its template's when the field is not in the file.
func TestConfigErrorLines(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             []string
	}{
		{"yaml", "sn.yaml", `store:
  backend: bolt
  step: -1
templates:
  orders:
    template: "SN-@<seq, widht=8>"
  tickets:
    template: QJ@<seq>
    sequence:
      backend: mysql
  daily:
    template: "@<date>@<seq, reset=day>"
    floor: 100
`, []string{
			`sn: config: sn.yaml: line 3: store.step -1: want 1 or more (or 0 for the default)`,
			`sn: config: sn.yaml: line 11: template "daily": sequence.path: the bolt backend needs a file (set path here or in store)`,
			`sn: config: sn.yaml: line 13: template "daily": floor: the counter resets every day, so there is no single counter to raise`,
			`sn: config: sn.yaml: line 5: template "orders": sequence.path: the bolt backend needs a file (set path here or in store)`,
			"sn: config: sn.yaml: line 6: template \"orders\": sn: template: offset 10: seq: unknown argument \"widht\" (known: key, overflow, reset, width)\n\tSN-@<seq, widht=8>\n\t          ^",
			`sn: config: sn.yaml: line 10: template "tickets": sequence.backend "mysql": unknown (want memory, bolt, redis, redis-strict)`,
		}},
		{"json", "sn.json", `{
  "templates": {
    "orders": {"template": "SN-@<seq>",
               "floor": -1},
    "tickets": {
      "template": "QJ@<seq>", "sequence": {"Backend": "redis"}
    }
  }
}`, []string{
			`sn: config: sn.json: line 4: template "orders": floor -1: want 0 (none) or more`,
			`sn: config: sn.json: line 5: template "tickets": sequence.url: the redis backend needs a Redis URL (set url here or in store)`,
		}},
		{"yaml merge keys", "sn.yaml", `templates:
  a: &a
    template: A@<seq>
    sequence: {step: 5}
  b:
    <<: *a
    floor: -2
`, []string{
			`sn: config: sn.yaml: line 4: template "a": sequence.step: not used by the memory backend`,
			`sn: config: sn.yaml: line 4: template "b": sequence.step: not used by the memory backend`,
			`sn: config: sn.yaml: line 7: template "b": floor -2: want 0 (none) or more`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := sn.LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil")
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "sn: config: "+tt.file, "sn: config: "+path)
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			var ce *sn.ConfigError
			if !errors.As(err, &ce) || ce.File != path || ce.Line == 0 {
				t.Errorf("errors.As(*ConfigError) = %+v, want File %s and a Line", ce, path)
			}
		})
	}
}

func TestConfigValidateOptions(t *testing.T) {
	cfg := sn.Config{Templates: tpl("@<region, code=x>-@<seq>")}
	if err := cfg.Validate(); err == nil {
		t.Fatal("Validate without the expression: nil error, want one for the unknown argument")
	}
	if err := cfg.Validate(sn.WithExpression("region", regionFactory)); err != nil {
		t.Fatalf("Validate with the expression: %v", err)
	}

	r := sn.NewRegistry()
	r.RegisterSequence("ticket", sequence.NewMemory())
	cfg = sn.Config{Templates: tpl("T@<ticket>")}
	err := cfg.Validate(sn.WithRegistry(r))
	want := `sn: config: template "orders": template "T@<ticket>": no @<seq> part; a configured template takes its numbers from the sequence seq`
	if err == nil || err.Error() != want {
		t.Errorf("Validate with another sequence:\n got %v\nwant %s", err, want)
	}
}

func regionFactory(args expression.Args) (expression.Expression, error) {
	if err := args.Check("code"); err != nil {
		return nil, err
	}
	return expression.Text(args["code"]), nil
}

func TestConfigSequence(t *testing.T) {
	cfg := sn.Config{
		Store: sn.SequenceConfig{Backend: "bolt", Path: "a.db", Step: 10, Target: "1m"},
		Templates: map[string]sn.TemplateConfig{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>", Sequence: sn.SequenceConfig{Path: "b.db", Step: 20}},
			"c": {Template: "C@<seq>", Sequence: sn.SequenceConfig{Backend: "memory"}},
		},
	}
	tests := []struct {
		name string
		want sn.SequenceConfig
		ok   bool
	}{
		{"a", sn.SequenceConfig{Backend: "bolt", Path: "a.db", Step: 10, Target: "1m"}, true},
		{"b", sn.SequenceConfig{Backend: "bolt", Path: "b.db", Step: 20, Target: "1m"}, true},
		{"c", sn.SequenceConfig{Backend: "memory", Path: "a.db", Step: 10, Target: "1m"}, true},
		{"d", sn.SequenceConfig{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cfg.Sequence(tt.name)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Sequence (-want +got):\n%s", diff)
			}
		})
	}
	if got, want := cfg.Names(), []string{"a", "b", "c"}; !cmp.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got, _ := (&sn.Config{Templates: tpl("A@<seq>")}).Sequence("orders"); got.Backend != "memory" {
		t.Errorf("default backend = %q, want memory", got.Backend)
	}
}

func TestConfigSegmentOptions(t *testing.T) {
	sc := sn.SequenceConfig{Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: "30s", FetchTimeout: "2s"}
	got, err := sc.SegmentOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := sequence.SegmentOptions{Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: 30 * time.Second, FetchTimeout: 2 * time.Second}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b func() time.Time) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("SegmentOptions (-want +got):\n%s", diff)
	}
	if _, err := (sn.SequenceConfig{Target: "1 minute"}).SegmentOptions(); err == nil || err.Error() != `target "1 minute": want a positive duration such as "1m" or "30s"` {
		t.Errorf("bad target: %v", err)
	}
}

func TestConfigBuildMemory(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)
	cfg := sn.Config{Templates: map[string]sn.TemplateConfig{
		"orders":   {Template: "@<ownerKey, value=SN>-@<seq, width=4>", Floor: 1000 - 1},
		"refunds":  {Template: "@<ownerKey, value=SN>R@<seq, width=4>"}, // shares orders' counter
		"tickets":  {Template: "QJ@<date>@<seq, width=3>"},
		"receipts": {Template: "R@<seq, width=3>", Floor: 41},
	}}
	set, err := cfg.Build(ctx, nil, sn.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if got, want := set.Names(), []string{"orders", "receipts", "refunds", "tickets"}; !cmp.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	var got []string
	for _, name := range []string{"orders", "refunds", "orders", "tickets", "tickets", "receipts"} {
		g, ok := set.Get(name)
		if !ok {
			t.Fatalf("Get(%q) = false", name)
		}
		s, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{"SN-1000", "SNR1001", "SN-1002", "QJ20170304001", "QJ20170304002", "R042"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("numbers (-want +got):\n%s", diff)
	}
	if g, ok := set.Get("missing"); ok || g != nil {
		t.Errorf("Get(missing) = %v, %v", g, ok)
	}
	if err := set.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := set.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// recorder is a Gen that records its life: what the fake Opener below
// returns. It counts in memory.
type recorder struct {
	*sequence.Memory
	name string
	log  *eventLog
	fail error // returned by Close
}

func (r *recorder) Close() error { r.log.add("close gen " + r.name); return r.fail }

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }
func (l *eventLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// fakeOpener opens a recorder per template and a release closer, and fails
// for templates named in fail.
func fakeOpener(log *eventLog, fail string) sn.Opener {
	return func(ctx context.Context, name string, sc sn.SequenceConfig) (sequence.Gen, io.Closer, error) {
		log.add(fmt.Sprintf("open %s %s %s step=%d", name, sc.Backend, sc.Path, sc.Step))
		if name == fail {
			return nil, closerFunc(func() error { log.add("release " + name); return nil }), errors.New("disk on fire")
		}
		return &recorder{Memory: sequence.NewMemory(), name: name, log: log},
			closerFunc(func() error { log.add("release " + name); return nil }), nil
	}
}

func TestConfigBuildOpener(t *testing.T) {
	ctx := t.Context()
	cfg := sn.Config{
		Store: sn.SequenceConfig{Backend: "bolt", Path: "x.db", Step: 10},
		Templates: map[string]sn.TemplateConfig{
			"a": {Template: "A@<seq>", Sequence: sn.SequenceConfig{Step: 20}},
			"b": {Template: "B@<seq>", Floor: 7},
			"m": {Template: "M@<seq>", Sequence: sn.SequenceConfig{Backend: "memory"}},
		},
	}
	log := &eventLog{}
	set, err := cfg.Build(ctx, fakeOpener(log, ""))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := set.Get("b")
	if s, err := b.Next(ctx); err != nil || s != "B8" {
		t.Errorf("b.Next = %q, %v; want B8 (above the floor)", s, err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"open a bolt x.db step=20",
		"open b bolt x.db step=10",
		"close gen b",
		"close gen a",
		"release b",
		"release a",
	}
	if diff := cmp.Diff(want, log.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestConfigBuildErrors(t *testing.T) {
	ctx := t.Context()
	cfg := sn.Config{
		Store: sn.SequenceConfig{Backend: "bolt", Path: "x.db"},
		Templates: map[string]sn.TemplateConfig{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>"},
			"c": {Template: "C@<seq>"},
		},
	}
	t.Run("opener fails", func(t *testing.T) {
		log := &eventLog{}
		set, err := cfg.Build(ctx, fakeOpener(log, "b"))
		if err == nil {
			set.Close()
			t.Fatal("Build: nil error")
		}
		if want := `sn: config: template "b": bolt sequence: disk on fire`; err.Error() != want {
			t.Errorf("Build error:\n got %v\nwant %s", err, want)
		}
		var ce *sn.ConfigError
		if !errors.As(err, &ce) || ce.Template != "b" {
			t.Errorf("errors.As(*ConfigError) = %+v", ce)
		}
		want := []string{"open a bolt x.db step=0", "open b bolt x.db step=0", "close gen a", "release b", "release a"}
		if diff := cmp.Diff(want, log.get()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("no opener", func(t *testing.T) {
		_, err := cfg.Build(ctx, nil)
		want := `sn: config: template "a": bolt sequence: Build was given no Opener (package github.com/sngen/sn/backend has one)`
		if err == nil || err.Error() != want {
			t.Errorf("Build error:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		log := &eventLog{}
		bad := sn.Config{Templates: tpl("A@<seq, width=0>")}
		_, err := bad.Build(ctx, fakeOpener(log, ""))
		if !errors.Is(err, sn.ErrTemplate) || !errors.Is(err, sn.ErrConfig) {
			t.Errorf("Build error = %v, want ErrConfig and ErrTemplate", err)
		}
		if got := log.get(); len(got) != 0 {
			t.Errorf("Build opened %q for an invalid config", got)
		}
	})
	t.Run("floor unsupported", func(t *testing.T) {
		plain := func(ctx context.Context, name string, sc sn.SequenceConfig) (sequence.Gen, io.Closer, error) {
			return nextOnly{}, nil, nil
		}
		c := sn.Config{Store: sn.SequenceConfig{Backend: "bolt", Path: "x"}, Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>", Floor: 5}}}
		_, err := c.Build(ctx, plain)
		want := `sn: config: template "a": floor: the bolt sequence (sn_test.nextOnly) cannot raise a floor`
		if err == nil || err.Error() != want {
			t.Errorf("Build error:\n got %v\nwant %s", err, want)
		}
	})
	t.Run("close errors", func(t *testing.T) {
		log := &eventLog{}
		open := func(ctx context.Context, name string, sc sn.SequenceConfig) (sequence.Gen, io.Closer, error) {
			return &recorder{Memory: sequence.NewMemory(), name: name, log: log, fail: errors.New(name + " stuck")}, nil, nil
		}
		set, err := cfg.Build(ctx, open)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Close(); err == nil || err.Error() != "c stuck\nb stuck\na stuck" {
			t.Errorf("Close = %v, want the three errors", err)
		}
	})
}

// nextOnly is a Gen with no optional capability.
type nextOnly struct{}

func (nextOnly) Next(context.Context, string) (int64, error) { return 1, nil }

func TestConfigBuildSharedGenClosedOnce(t *testing.T) {
	log := &eventLog{}
	shared := &recorder{Memory: sequence.NewMemory(), name: "shared", log: log}
	open := func(ctx context.Context, name string, sc sn.SequenceConfig) (sequence.Gen, io.Closer, error) {
		return shared, nil, nil
	}
	cfg := sn.Config{Store: sn.SequenceConfig{Backend: "redis", URL: "redis://x"}, Templates: map[string]sn.TemplateConfig{
		"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"},
	}}
	set, err := cfg.Build(t.Context(), open)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"close gen shared"}, log.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestConfigSetConcurrentUse(t *testing.T) {
	ctx := t.Context()
	cfg := sn.Config{Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"}}}
	set, err := cfg.Build(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := set.Names()[i%2]
			g, _ := set.Get(name)
			for range 100 {
				s, err := g.Next(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[s] {
					t.Errorf("%s issued twice", s)
				}
				seen[s] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 800 {
		t.Errorf("%d numbers, want 800", len(seen))
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
}
