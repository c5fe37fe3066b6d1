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
	// Refused by Validate, before any store is opened, naming the backend
	// and the one that serves it.
	if err := cfg.Validate(); !errors.Is(err, sn.ErrProfile) || !strings.Contains(err.Error(), "backend memory issues from blocks") || !strings.Contains(err.Error(), "backend: sql") {
		t.Errorf("gapless over memory: %v, want ErrProfile", err)
	}
	if _, err := cfg.Build(context.Background()); !errors.Is(err, sn.ErrProfile) || !strings.Contains(err.Error(), "can leave gaps") {
		t.Errorf("gapless over memory at Build: %v, want ErrProfile", err)
	}
}
