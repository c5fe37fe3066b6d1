package config_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend" // bolt, redis and redis-strict
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
)

// ignoreSource ignores where a Config was read from.
var ignoreSource = cmpopts.IgnoreUnexported(config.Config{})

func TestParse(t *testing.T) {
	want := &config.Config{
		Store: config.Sequence{Backend: "bolt", Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: "30s", FetchTimeout: "2s", Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{
			"orders":  {Template: "SN-@<seq, width=8>", Floor: 500},
			"tickets": {Template: "QJ@<seq, width=6>", Sequence: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://localhost:6379/0", "prefix": "t:"}}},
			"refunds": {Template: "RF@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://localhost:6379/0", "ledger": "postgres://sn@db/shop", "table": "numbers", "single_host": true}}},
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
  refunds:
    template: RF@<seq>
    sequence:
      backend: redis-strict
      url: redis://localhost:6379/0
      ledger: postgres://sn@db/shop
      table: numbers
      single_host: true
`},
		{"yml upper case", "YML", `
store: {backend: bolt, path: sn.db, step: 100, min_step: 10, max_step: 1000, prefetch: 0.5, target: 30s, fetch_timeout: 2s}
templates:
  orders: {template: "SN-@<seq, width=8>", floor: 500}
  tickets: {template: "QJ@<seq, width=6>", sequence: {backend: redis, url: "redis://localhost:6379/0", prefix: "t:"}}
  refunds: {template: "RF@<seq>", sequence: {backend: redis-strict, url: "redis://localhost:6379/0", ledger: "postgres://sn@db/shop", table: numbers, single_host: true}}
`},
		{"json", "json", `{
  "store": {"backend": "bolt", "path": "sn.db", "step": 100, "min_step": 10, "max_step": 1000,
            "prefetch": 0.5, "target": "30s", "fetch_timeout": "2s"},
  "templates": {
    "orders": {"template": "SN-@<seq, width=8>", "floor": 500},
    "tickets": {"template": "QJ@<seq, width=6>",
                "sequence": {"backend": "redis", "url": "redis://localhost:6379/0", "prefix": "t:"}},
    "refunds": {"template": "RF@<seq>", "sequence": {"backend": "redis-strict", "url": "redis://localhost:6379/0",
                "ledger": "postgres://sn@db/shop", "table": "numbers", "single_host": true}}
  }
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Decode([]byte(tt.data), tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, format, data, want string
	}{
		{"json unknown field", "json", "{\n  \"templates\": {\n    \"a\": {\"template\": \"x@<seq>\", \"flor\": 1}\n  }\n}",
			`config: line 3: template "a": unknown field "flor" (known: floor, profile, sequence, template, tenant)`},
		{"json unknown top-level field", "json", `{"template": {}}`,
			`config: line 1: unknown field "template" (known: obfuscation, serve, store, templates, tenants)`},
		{"json unknown field after a template named like it", "json", "{\"templates\": {\"flor\": {\"template\": \"x@<seq>\"},\n\"a\": {\"Template\": \"y@<seq>\", \"sequence\": {\"steps\": [1]}}}}",
			`config: line 2: template "a": sequence.steps: not used by the memory backend; did you mean step?`},
		{"json wrong type", "json", "{\"templates\": {\n\"a\": {\"floor\": \"ten\"}}}",
			`config: line 2: template "a": floor: want a whole number, found "ten"`},
		{"json string for a bool", "json", "{\"store\": {\"backend\": \"redis-strict\", \"url\": \"redis://x\", \"path\": \"x.db\", \"single_host\": \"sure\"},\n\"templates\": {\"a\": {\"template\": \"A@<seq>\"}}}",
			`config: line 1: store.single_host: want true or false, found "sure"`},
		{"yaml word for a bool", "yaml", "store:\n  backend: redis-strict\n  url: redis://x\n  path: x.db\n  single_host: maybe\ntemplates:\n  a: {template: A@<seq>}\n",
			`config: line 5: store.single_host: want true or false, found "maybe"`},
		{"json fraction", "json", "{\"store\": {\"step\": 1.5}}",
			`config: line 1: store.step: want a whole number, found 1.5`},
		{"json object for a string", "json", "{\"templates\": {\"a\": {\"template\": {\"x\": 1}}}}",
			`config: line 1: template "a": template: want a string, found an object`},
		{"json template as a string", "json", "{\"templates\": {\n\"a\": \"A@<seq>\"}}",
			`config: line 2: template "a": want an object with the fields floor, profile, sequence, template, tenant, found "A@<seq>"`},
		{"json not an object", "json", "[1]",
			`config: line 1: want an object with the fields obfuscation, serve, store, templates, tenants, found a list`},
		{"json key twice", "json", "{\"templates\": {\"a\": {\"template\": \"A@<seq>\",\n\"Template\": \"B@<seq>\"}}}",
			`config: line 2: template "a": template: given twice (first at line 1)`},
		{"json template twice", "json", "{\"templates\": {\"a\": {\"template\": \"A@<seq>\"},\n\"a\": {\"template\": \"B@<seq>\"}}}",
			`config: line 2: template "a": defined twice (first at line 1)`},
		{"json syntax", "json", "{\"templates\": {\n\"a\": {,}}}",
			`config: line 2: invalid character ',' looking for beginning of object key string`},
		{"json empty", "json", "  ", `config: empty document`},
		{"json two values", "json", `{} {}`, `config: line 1: data after the top-level object`},
		{"yaml unknown field", "yaml", "templates:\n  a:\n    template: x@<seq>\n    flor: 1\n",
			`config: line 4: template "a": unknown field "flor" (known: floor, profile, sequence, template, tenant)`},
		{"yaml unknown fields", "yaml", "store:\n  backnd: bolt\n  steps: 5\ntemplates:\n  a: {template: A@<seq>}\n",
			"config: line 2: store.backnd: not used by the backend of any template (memory); did you mean backend?\n" +
				`config: line 3: store.steps: not used by the backend of any template (memory); did you mean step?`},
		{"yaml wrong type", "yaml", "templates:\n  a:\n    floor: ten\n",
			`config: line 3: template "a": floor: want a whole number, found "ten"`},
		{"yaml wrong types in a flow mapping", "yaml", "templates:\n  a: {template: A@<seq>, floor: tenthousand, sequence: {step: [1]}}\n",
			"config: line 2: template \"a\": floor: want a whole number, found \"tenthousand\"\n" +
				`config: line 2: template "a": sequence.step: want a whole number, found a list`},
		{"yaml serve as a number", "yaml", "templates: {}\nserve: 5\n",
			`config: line 2: serve: want a mapping, found 5`},
		{"yaml fraction", "yaml", "templates:\n  a:\n    floor: 1.5\n",
			`config: line 3: template "a": floor: want a whole number, found 1.5`},
		{"yaml template as a string", "yaml", "templates:\n  a: A@<seq>\n",
			`config: line 2: template "a": want a mapping with the fields floor, profile, sequence, template, tenant, found "A@<seq>"`},
		{"yaml key twice", "yaml", "templates:\n  a:\n    template: A@<seq>\n  a:\n    template: B@<seq>\n",
			`config: line 4: template "a": defined twice (first at line 2)`},
		{"yaml syntax", "yaml", "templates: [\n", `config: line 1: did not find expected node content`},
		{"yaml merges that merge each other", "yaml", "templates: &x {a: &y {<<: *x}, <<: *y}\n", `config: anchor 'x' value contains itself`},
		{"yaml two documents", "yaml", "templates: {}\n---\ntemplates: {}\n", `config: more than one YAML document`},
		{"unknown format", "toml", "", `config: unknown format "toml" (want json or yaml)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { decodeRefuses(t, tt.data, tt.format, tt.want) })
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := &config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
	for _, name := range []string{"c.yaml", "c.yml", "c.YAML"} {
		got, err := config.Load(write(name, "templates:\n  a:\n    template: A@<seq>\n"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	got, err := config.Load(write("c.json", `{"templates": {"a": {"template": "A@<seq>"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreSource); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}

	bad := write("bad.yaml", "templates:\n  a:\n    tmpl: A\n")
	_, err = config.Load(bad)
	if want := "config: " + bad + `: line 3: template "a": unknown field "tmpl" (known: floor, profile, sequence, template, tenant)`; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %s", err, want)
	}
	toml := write("c.toml", "")
	_, err = config.Load(toml)
	if want := "config: " + toml + `: unknown extension ".toml" (want .json, .yaml or .yml)`; err == nil || err.Error() != want {
		t.Errorf("Load(toml) = %v, want %s", err, want)
	}
	_, err = config.Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, config.ErrInvalid) {
		t.Errorf("Load(missing) = %v, want ErrInvalid and fs.ErrNotExist", err)
	}
}

// tpl is a config of one template in the default store.
func tpl(text string) map[string]config.Template {
	return map[string]config.Template{"orders": {Template: text}}
}

// newError returns the message of sn.New's error for text, compiled as
// Validate compiles it: config passes it on.
func newError(t *testing.T, text string) string {
	t.Helper()
	_, err := sn.New(text, sn.WithSequence("seq", sequence.NewMemory()))
	if err == nil {
		t.Fatalf("sn.New(%s): nil error", text)
	}
	return err.Error()
}

// floorError returns the message of sn.Generator.Floor for a template
// whose counter key varies per call: the reason config gives for refusing
// its floor.
func floorError(t *testing.T, text string) string {
	t.Helper()
	err := sn.MustNew(text, sn.WithSequence("seq", sequence.NewMemory())).Floor(context.Background(), 10)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Floor on %s = %v, want errors.ErrUnsupported", text, err)
	}
	return err.Error()
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		want []string // the joined errors, one per entry; none when valid
		is   error    // wrapped by the error, when not nil
	}{
		{name: "valid memory", cfg: config.Config{Templates: tpl("SN-@<seq, width=8>")}},
		{name: "valid bolt with store defaults", cfg: config.Config{
			Store:     config.Sequence{Backend: "bolt", Step: 10, Options: config.Options{"path": "sn.db"}},
			Templates: map[string]config.Template{"a": {Template: "A@<seq>", Floor: 100}, "b": {Template: "B@<seq>", Sequence: config.Sequence{Step: 20, MaxStep: 40}}},
		}},
		{name: "store fields unused by a memory template", cfg: config.Config{
			Store:     config.Sequence{Step: 10, Options: config.Options{"path": "sn.db", "url": "redis://x"}},
			Templates: tpl("A@<seq>"),
		}, want: []string{
			`config: store.path: not used by the backend of any template (memory)`,
			`config: store.url: not used by the backend of any template (memory)`,
		}},
		{name: "valid redis-strict on a single host", cfg: config.Config{
			Templates: map[string]config.Template{"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Step: 5, Options: config.Options{"url": "redis://x", "path": "sn.db", "single_host": true, "prefix": "p:"}}}},
		}},
		{name: "valid ledgers", cfg: config.Config{
			Store: config.Sequence{Backend: "redis", Step: 10, Options: config.Options{"url": "redis://x", "ledger": "postgres://sn@db/orders", "table": "numbers"}},
			Templates: map[string]config.Template{
				"a": {Template: "A@<seq>", Floor: 100},
				"b": {Template: "B@<seq>", Sequence: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql://sn:pw@db/orders"}}},
				"c": {Template: "C@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Step: 100}},
			},
		}},
		// A store's path does not pair a Redis with a file: each template
		// has the ledger of the store.
		{name: "redis-strict over the store's ledger, not its file", cfg: config.Config{
			Store:     config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db", "url": "redis://x", "ledger": "postgres://sn@db/orders"}},
			Templates: map[string]config.Template{"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis-strict"}}},
		}},
		{name: "no templates", want: []string{`config: no templates`}},
		{name: "bad template", cfg: config.Config{Templates: tpl("SN-@<seq, widht=8>")}, want: []string{
			`config: template "orders": ` + newError(t, "SN-@<seq, widht=8>"),
		}},
		{name: "missing template", cfg: config.Config{Templates: tpl(" ")}, want: []string{`config: template "orders": template: missing`}},
		{name: "other sequence", cfg: config.Config{Templates: tpl("@<seq2>-@<n>")}, want: []string{
			`config: template "orders": ` + newError(t, "@<seq2>-@<n>"),
		}},
		{name: "bad name", cfg: config.Config{Templates: map[string]config.Template{"my orders": {Template: "A@<seq>"}}}, want: []string{
			`config: template "my orders": bad name: want letters, digits, "_", "-" and "."`,
		}},
		{name: "unknown backend", cfg: config.Config{Templates: map[string]config.Template{"orders": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "mysql"}}}}, want: []string{
			`config: template "orders": sequence.backend "mysql": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)`,
		}},
		{name: "backend close to a known one", cfg: config.Config{Templates: map[string]config.Template{"orders": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "rdis"}}}}, want: []string{
			`config: template "orders": sequence.backend "rdis": unknown, did you mean "redis"? (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)`,
		}},
		{name: "unknown store backend", cfg: config.Config{Store: config.Sequence{Backend: "consul"}, Templates: tpl("A@<seq>")}, want: []string{
			`config: store.backend "consul": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)`,
		}},
		{name: "bad numbers", cfg: config.Config{Templates: map[string]config.Template{"orders": {Template: "A@<seq>", Floor: -1,
			Sequence: config.Sequence{Backend: "bolt", Step: -5, MinStep: 20, MaxStep: 10, Prefetch: 1, Target: "soon", FetchTimeout: "-1s", Options: config.Options{"path": "x", "replicas": -1, "replica_timeout": "0s"}}}}}, want: []string{
			`config: template "orders": sequence.step -5: want 1 or more (or 0 for the default)`,
			`config: template "orders": sequence.min_step 20: want at most max_step, 10`,
			`config: template "orders": sequence.prefetch 1: want a share between 0 and 1, such as 0.2`,
			`config: template "orders": sequence.target "soon": want a positive duration such as "1m" or "30s"`,
			`config: template "orders": sequence.fetch_timeout "-1s": want a positive duration such as "1m" or "30s"`,
			`config: template "orders": sequence.replica_timeout: not used by the bolt backend`,
			`config: template "orders": sequence.replicas: not used by the bolt backend`,
			`config: template "orders": floor -1: want 0 (none) or more`,
		}},
		{name: "template step against store max_step", cfg: config.Config{
			Store:     config.Sequence{Backend: "bolt", MaxStep: 100, Options: config.Options{"path": "x"}},
			Templates: map[string]config.Template{"orders": {Template: "A@<seq>", Sequence: config.Sequence{Step: 500}}},
		}, want: []string{`config: template "orders": sequence.step 500: want at most max_step, 100`}},
		{name: "bad store numbers are reported once", cfg: config.Config{
			Store:     config.Sequence{Backend: "bolt", Step: -1, Options: config.Options{"path": "x"}},
			Templates: map[string]config.Template{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"}},
		}, want: []string{`config: store.step -1: want 1 or more (or 0 for the default)`}},
		{name: "bolt without path", cfg: config.Config{Store: config.Sequence{Backend: "bolt"}, Templates: tpl("A@<seq>")}, want: []string{
			`config: template "orders": sequence.path: the bolt backend needs a file (set path here or in store)`,
		}},
		{name: "sqlite without path", cfg: config.Config{Store: config.Sequence{Backend: "sqlite"}, Templates: tpl("A@<seq>")}, want: []string{
			`config: template "orders": sequence.path: the sqlite backend needs a file (set path here or in store)`,
		}},
		{name: "redis-strict without url and ledger", cfg: config.Config{Store: config.Sequence{Backend: "redis-strict"}, Templates: tpl("A@<seq>")}, want: []string{
			`config: template "orders": sequence.ledger: the redis-strict backend needs a ledger that every machine using its Redis shares, ` +
				`a database URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379 ` +
				`(set ledger here or in store; or, when one host alone uses the Redis, path and single_host: true)`,
			`config: template "orders": sequence.url: the redis-strict backend needs a Redis URL (set url here or in store)`,
		}},
		// A file per machine behind a shared Redis repeats numbers once
		// Redis loses its data.
		{name: "redis-strict with a file of the store's", cfg: config.Config{
			Store:     config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db", "url": "redis://x"}},
			Templates: map[string]config.Template{"orders": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis-strict"}}},
		}, want: []string{
			`config: template "orders": sequence.path: path "sn.db": a file is one machine's, and behind a Redis that several machines share it repeats numbers once Redis loses its data: ` +
				`set ledger to a database every machine shares (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), or single_host: true if one host alone uses this Redis`,
		}},
		{name: "sql without a ledger", cfg: config.Config{Store: config.Sequence{Backend: "sql", Options: config.Options{"table": "numbers"}}, Templates: tpl("A@<seq>")}, want: []string{
			`config: template "orders": sequence.ledger: the sql backend needs a ledger, a database URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379 (set ledger here or in store)`,
		}},
		{name: "fields the backend does not use", cfg: config.Config{Templates: map[string]config.Template{
			"m": {Template: "M@<seq>", Sequence: config.Sequence{Step: 5, Options: config.Options{"path": "x"}}},
			"r": {Template: "R@<seq>", Sequence: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://x", "path": "x"}}},
			"s": {Template: "S@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Target: "1m", Options: config.Options{"url": "redis://x", "path": "x", "single_host": true}}},
			"q": {Template: "Q@<seq>", Sequence: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "postgres://db/x", "url": "redis://x", "path": "x", "single_host": true}}},
		}}, want: []string{
			`config: template "m": sequence.step: not used by the memory backend`,
			`config: template "m": sequence.path: not used by the memory backend`,
			`config: template "q": sequence.path: not used by the sql backend`,
			`config: template "q": sequence.single_host: not used by the sql backend`,
			`config: template "q": sequence.url: not used by the sql backend`,
			`config: template "r": sequence.path: not used by the redis backend`,
			`config: template "s": sequence.target: not used by the redis-strict backend`,
		}},
		{name: "floor on a resetting counter", cfg: config.Config{Templates: map[string]config.Template{
			"daily":  {Template: "@<date>@<seq, reset=day>", Floor: 10},
			"perkey": {Template: "@<unit>-@<seq, key=unit>", Floor: 10},
			"owner":  {Template: "@<ownerKey>-@<seq>", Floor: 10},
		}}, want: []string{
			`config: template "daily": floor: ` + floorError(t, "@<date>@<seq, reset=day>"),
			`config: template "owner": floor: ` + floorError(t, "@<ownerKey>-@<seq>"),
			`config: template "perkey": floor: ` + floorError(t, "@<unit>-@<seq, key=unit>"),
		}, is: errors.ErrUnsupported},
		{name: "floor on a bolt template", cfg: config.Config{Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Floor: 10, Sequence: config.Sequence{Backend: "bolt", Options: config.Options{"path": "a.db"}}},
		}}},
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
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("errors.Is(ErrInvalid) = false")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v) = false", tt.is)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("errors.As(*Error) = false")
			}
		})
	}
}

func TestErrorFields(t *testing.T) {
	cfg := config.Config{Templates: map[string]config.Template{
		"a": {Template: "A@<seq, width=x>"},
		"b": {Template: "B@<seq>", Sequence: config.Sequence{Backend: "bolt", Step: 5, MinStep: 10}},
	}}
	err := cfg.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		ce := e.(*config.Error)
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
// field's or, when the field is not in the file, that of the nearest field
// around it (the template's sequence) or the template's.
func TestErrorLines(t *testing.T) {
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
			`config: sn.yaml: line 3: store.step -1: want 1 or more (or 0 for the default)`,
			`config: sn.yaml: line 11: template "daily": sequence.path: the bolt backend needs a file (set path here or in store)`,
			`config: sn.yaml: line 13: template "daily": floor: ` + floorError(t, "@<date>@<seq, reset=day>"),
			`config: sn.yaml: line 5: template "orders": sequence.path: the bolt backend needs a file (set path here or in store)`,
			`config: sn.yaml: line 6: template "orders": ` + newError(t, "SN-@<seq, widht=8>"),
			`config: sn.yaml: line 10: template "tickets": sequence.backend "mysql": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)`,
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
			`config: sn.json: line 4: template "orders": floor -1: want 0 (none) or more`,
			`config: sn.json: line 6: template "tickets": sequence.url: the redis backend needs a Redis URL (set url here or in store)`,
		}},
		{"yaml merge keys", "sn.yaml", `templates:
  a: &a
    template: A@<seq>
    sequence: {step: 5}
  b:
    <<: *a
    floor: -2
`, []string{
			`config: sn.yaml: line 4: template "a": sequence.step: not used by the memory backend`,
			`config: sn.yaml: line 4: template "b": sequence.step: not used by the memory backend`,
			`config: sn.yaml: line 7: template "b": floor -2: want 0 (none) or more`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil")
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "config: "+tt.file, "config: "+path)
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != path || ce.Line == 0 {
				t.Errorf("errors.As(*Error) = %+v, want File %s and a Line", ce, path)
			}
		})
	}
}

func TestValidateOptions(t *testing.T) {
	cfg := config.Config{Templates: tpl("@<region, code=x>-@<seq>")}
	if err := cfg.Validate(); err == nil {
		t.Fatal("Validate without the expression: nil error, want one for the unknown argument")
	}
	withRegion := sn.NewRegistry()
	withRegion.RegisterExpression("region", regionFactory)
	if err := cfg.Validate(sn.WithRegistry(withRegion)); err != nil {
		t.Fatalf("Validate with the expression: %v", err)
	}

	cfg = config.Config{Templates: tpl("T@<ticket>")}
	err := cfg.Validate(sn.WithSequence("ticket", sequence.NewMemory()))
	want := `config: template "orders": template "T@<ticket>": no @<seq> part; a configured template takes its numbers from the sequence seq`
	if err == nil || err.Error() != want {
		t.Errorf("Validate with another sequence:\n got %v\nwant %s", err, want)
	}
}

func regionFactory(args expression.Args) (expression.Expression, error) {
	if err := args.Check("code"); err != nil {
		return nil, err
	}
	return region(args["code"]), nil
}

// region prints the code it was given.
type region string

func (r region) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, r...), nil
}
func (region) Order() expression.Order { return expression.Before }
func (r region) MaxLen() int           { return len(r) }

func TestSequence(t *testing.T) {
	cfg := config.Config{
		Store: config.Sequence{Backend: "bolt", Step: 10, Target: "1m", Options: config.Options{"path": "a.db"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>", Sequence: config.Sequence{Step: 20, Options: config.Options{"path": "b.db"}}},
			"c": {Template: "C@<seq>", Sequence: config.Sequence{Backend: "memory"}},
		},
	}
	tests := []struct {
		name string
		want config.Sequence
		ok   bool
	}{
		{"a", config.Sequence{Backend: "bolt", Step: 10, Target: "1m", Options: config.Options{"path": "a.db"}}, true},
		{"b", config.Sequence{Backend: "bolt", Step: 20, Target: "1m", Options: config.Options{"path": "b.db"}}, true},
		{"c", config.Sequence{Backend: "memory", Step: 10, Target: "1m", Options: config.Options{"path": "a.db"}}, true},
		{"d", config.Sequence{}, false},
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
	if got, _ := (&config.Config{Templates: tpl("A@<seq>")}).Sequence("orders"); got.Backend != "memory" {
		t.Errorf("default backend = %q, want memory", got.Backend)
	}
}

func TestSegmentOptions(t *testing.T) {
	sc := config.Sequence{Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: "30s", FetchTimeout: "2s", Idle: "1h"}
	got, err := sc.SegmentOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := sequence.SegmentOptions{Step: 100, MinStep: 10, MaxStep: 1000, Prefetch: 0.5, Target: 30 * time.Second, FetchTimeout: 2 * time.Second, Idle: time.Hour}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b func() time.Time) bool { return a == nil && b == nil })); diff != "" {
		t.Errorf("SegmentOptions (-want +got):\n%s", diff)
	}
	if _, err := (config.Sequence{Target: "1 minute"}).SegmentOptions(); err == nil || err.Error() != `target "1 minute": want a positive duration such as "1m" or "30s"` {
		t.Errorf("bad target: %v", err)
	}
	if _, err := (config.Sequence{Idle: "soon"}).SegmentOptions(); err == nil || err.Error() != `idle "soon": want a duration such as "10m" (negative: keep every key)` {
		t.Errorf("bad idle: %v", err)
	}
	if o, err := (config.Sequence{Idle: "-1s"}).SegmentOptions(); err != nil || o.Idle >= 0 {
		t.Errorf("idle -1s: %v, %v; want a negative Idle", o.Idle, err)
	}
}

// decodeRefuses checks that data, in format, is refused with the error
// want: by Decode, or for a mistake in a backend's fields, which its
// driver reads, by Validate.
func decodeRefuses(t *testing.T, data, format, want string) {
	t.Helper()
	c, err := config.Decode([]byte(data), format)
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		t.Fatalf("Decode and Validate = %+v, want error %q", c, want)
	}
	if got := err.Error(); got != want {
		t.Errorf("error:\n got %s\nwant %s", got, want)
	}
	if !errors.Is(err, config.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
}

// A template's profile: in-gst is checked at Load, with the rule and the
// field; an unknown profile is refused; gapless is refused at Build, over
// a store that reserves blocks.
func TestProfile(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"templates:\n  inv: {template: \"INV/@<seq, width=8>\", profile: in-gst}\n", ""},
		{"templates:\n  inv: {template: \"INV_@<seq, width=8>\", profile: in-gst}\n", `template "inv": sn: template does not meet its profile in-gst`},
		{"templates:\n  inv: {template: \"INV-@<seq, width=14>\", profile: in-gst}\n", "up to 18 characters"},
		{"templates:\n  inv: {template: \"INV-@<seq>\", profile: gst}\n", `profile "gst": want one of gapless, in-gst, fr-continuous`},
	} {
		cfg, err := config.Decode([]byte(tt.yaml), "yaml")
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.yaml, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.yaml, err, tt.want)
		}
	}
	cfg, err := config.Decode([]byte("store: {backend: memory}\ntemplates:\n  inv: {template: \"INV-@<seq>\", profile: gapless}\n"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Build(context.Background()); !errors.Is(err, sn.ErrProfile) || !strings.Contains(err.Error(), "can leave gaps") {
		t.Errorf("gapless over memory at Build: %v, want ErrProfile", err)
	}
}
