package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/config"
)

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
			`config: template "orders": sequence.ledger: the sql backend needs a ledger, a database URL such as postgres://user:password@host:5432/db or mysql://user:password@host:3306/db (set ledger here or in store)`,
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

// Every value Validate refuses in queued, balanced and snowflake
// sequences: each error names the file, the line and the field.
func TestValidateKinds(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string // the errors, "sn.yaml: line N: " and after
		fields     []string // their Template and Field
	}{
		{"queued values", `templates:
  a:
    template: A@<seq>
    sequence:
      queued:
        lead: -50ms
        idle: soon
        min: -1
`, []string{
			`line 6: template "a": sequence.queued.lead "-50ms": want a positive duration such as "50ms" or "30s"`,
			`line 7: template "a": sequence.queued.idle "soon": want a duration such as "10m" (negative: keep every queue)`,
			`line 8: template "a": sequence.queued.min -1: want 1 to 2147483647 (or 0 for the default)`,
		}, []string{"a sequence.queued.lead", "a sequence.queued.idle", "a sequence.queued.min"}},
		{"queued min above max", `templates:
  a:
    template: A@<seq>
    sequence: {queued: {min: 100, max: 10}}
  b:
    template: B@<seq>
    sequence:
      queued:
        min: 100000
`, []string{
			`line 4: template "a": sequence.queued.min 100: above max 10`,
			`line 9: template "b": sequence.queued.min 100000: above the default max 65536`,
		}, []string{"a sequence.queued.min", "b sequence.queued.min"}},
		{"queued min against the store's max", `store:
  queued: {max: 10}
templates:
  a:
    template: A@<seq>
    sequence:
      queued: {min: 20}
`, []string{
			`line 7: template "a": sequence.queued.min 20: above max 10`,
		}, []string{"a sequence.queued.min"}},
		{"store queued reported once", `store:
  queued:
    lead: 0s
templates:
  a: {template: A@<seq>}
  b: {template: B@<seq>}
`, []string{
			`line 3: store.queued.lead "0s": want a positive duration such as "50ms" or "30s"`,
		}, []string{" store.queued.lead"}},
		{"balanced of three", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      balanced:
        rescue: -1s
        timeout: soon
        members:
          - path: a.db
          - path: b.db
          - path: c.db
`, []string{
			`line 9: template "a": sequence.balanced.members 3 stores: want a power of two from 2 to 65536 (a member's index takes the low bits of each number)`,
			`line 7: template "a": sequence.balanced.rescue "-1s": want a positive duration such as "50ms" or "30s"`,
			`line 8: template "a": sequence.balanced.timeout "soon": want a positive duration such as "50ms" or "30s"`,
		}, []string{"a sequence.balanced.members", "a sequence.balanced.rescue", "a sequence.balanced.timeout"}},
		{"balanced without members", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      path: a.db
      balanced: {rescue: 1m}
`, []string{
			`line 7: template "a": sequence.balanced.members missing: want a list of 2, 4, 8... stores`,
		}, []string{"a sequence.balanced.members"}},
		// Two members on one store would fail together: the Balanced would
		// gain nothing (its numbers would still be unique).
		{"balanced members on one store", `store:
  backend: bolt
templates:
  a:
    template: A@<seq>
    sequence:
      balanced:
        members:
          - path: a.db
          - path: ./a.db
`, []string{
			`line 10: template "a": sequence.balanced.members[1]: the same store as sequence.balanced.members[0] (bolt $DIR/a.db): members fail over to one another, so each must be a store of its own`,
		}, []string{"a sequence.balanced.members[1]"}},
		{"balanced members of memory", `templates:
  a:
    template: A@<seq>
    sequence:
      balanced: {members: [{}, {}]}
`, []string{
			`line 5: template "a": sequence.balanced.members[1]: the same store as sequence.balanced.members[0] (memory): members fail over to one another, so each must be a store of its own`,
		}, []string{"a sequence.balanced.members[1]"}},
		{"member mistakes", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      max_step: 10
      balanced:
        members:
          - {path: a.db, url: redis://x}
          - {backend: rdis}
          - {path: c.db, balanced: {members: [{}, {}]}}
          - {path: d.db, step: -3}
`, []string{
			`line 11: template "a": sequence.balanced.members[2].balanced: a member is one store, not balanced itself`,
			`line 12: template "a": sequence.balanced.members[3].step -3: want 1 or more (or 0 for the default)`,
			`line 9: template "a": sequence.balanced.members[0].url: not used by the bolt backend`,
			`line 10: template "a": sequence.balanced.members[1].backend "rdis": unknown, did you mean "redis"? (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)`,
		}, []string{"a sequence.balanced.members[2].balanced", "a sequence.balanced.members[3].step", "a sequence.balanced.members[0].url", "a sequence.balanced.members[1].backend"}},
		{"member against the template", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      max_step: 10
      ledger: postgres://db/x
      balanced:
        members:
          - {path: a.db}
          - {path: b.db, step: 50}
          - {backend: sql}
          - {backend: memory, path: d.db}
`, []string{
			`line 11: template "a": sequence.balanced.members[1].step 50: want at most max_step, 10`,
			`line 13: template "a": sequence.balanced.members[3].path: not used by the memory backend`,
		}, []string{"a sequence.balanced.members[1].step", "a sequence.balanced.members[3].path"}},
		{"template field no member reads", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      table: numbers
      balanced:
        members: [{path: a.db}, {path: b.db}]
`, []string{
			`line 6: template "a": sequence.table: not used by the backend of any member`,
		}, []string{"a sequence.table"}},
		{"member without its store", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: bolt
      balanced:
        members: [{path: a.db}, {}]
`, []string{
			`line 7: template "a": sequence.balanced.members[1].path: the bolt backend needs a file (set path here or in store)`,
		}, []string{"a sequence.balanced.members[1].path"}},
		// A snowflake id takes all 63 bits of the twitter layout: beside
		// an index, it would overflow.
		{"snowflake members", `templates:
  a:
    template: A@<seq>
    sequence:
      backend: snowflake
      single_process: true
      balanced:
        members: [{worker: 1}, {worker: 2, layout: 41/8/12, epoch: 2024-01-01}]
`, []string{
			`line 8: template "a": sequence.balanced.members[0]: the snowflake backend's numbers take up to 63 bits, and the index of 2 members takes 1 more of the 63 a number has: give the member a layout of at most 62 bits`,
		}, []string{"a sequence.balanced.members[0]"}},
		{"snowflake layouts", `store:
  backend: snowflake
  url: redis://cache:6379/0
templates:
  a:
    template: A@<seq>
    sequence: {layout: twiter}
  b:
    template: B@<seq>
    sequence: {layout: 41-10-12}
  c:
    template: C@<seq>
    sequence: {layout: 42/10/12, epoch: 2024-01-01}
  d:
    template: D@<seq>
    sequence: {layout: 30/10/12, epoch: 2024-01-01}
  e:
    template: E@<seq>
    sequence:
      layout: 41/10/12
  f:
    template: F@<seq>
    sequence:
      layout: 41/10/12
      epoch: 2024/01/01
      unit: 0.5us
  g:
    template: G@<seq>
    sequence:
      layout: 41/10/12
      epoch: 2999-01-01
  h:
    template: H@<seq>
    sequence:
      layout: sonyflake
      epoch: 2024-01-01
`, []string{
			`line 7: template "a": sequence.layout: layout "twiter": unknown, did you mean "twitter"? (want twitter, sonyflake, or the bits of time, worker and sequence such as 41/10/12 with an epoch)`,
			`line 10: template "b": sequence.layout: layout "41-10-12": unknown (want twitter, sonyflake, or the bits of time, worker and sequence such as 41/10/12 with an epoch)`,
			`line 13: template "c": sequence.layout: layout "42/10/12": sequence: invalid argument: snowflake layout: time 42 + worker 10 + sequence 12 = 64 bits; an id has 63 (the sign bit stays 0)`,
			`line 16: template "d": sequence.layout: layout "30/10/12": sequence: invalid argument: snowflake layout: 30 bits of 1ms since 2024-01-01 end on 2024-01-13, less than 10 years from now: give time more bits, a longer unit or a later epoch`,
			`line 19: template "e": sequence.epoch: layout 41/10/12 needs an epoch, the instant its time counts from, such as 2024-01-01: the day the system goes live`,
			`line 26: template "f": sequence.unit: unit "0.5us": want a duration of at least 1µs, such as "1ms" or "10ms"`,
			`line 25: template "f": sequence.epoch: epoch "2024/01/01": want a date such as 2024-01-01 or an instant such as 2024-01-01T00:00:00Z`,
			`line 31: template "g": sequence.epoch: epoch "2999-01-01": in the future; the time of an id counts from the epoch`,
			`line 36: template "h": sequence.epoch: not used by the snowflake backend`,
		}, []string{"a sequence.layout", "b sequence.layout", "c sequence.layout", "d sequence.layout", "e sequence.epoch", "f sequence.unit", "f sequence.epoch", "g sequence.epoch", "h sequence.epoch"}},
		{"snowflake workers", `store:
  backend: snowflake
templates:
  a:
    template: A@<seq>
    sequence: {worker: 1024, single_process: true}
  b:
    template: B@<seq>
    sequence: {worker: -1, single_process: true, layout: sonyflake}
  c:
    template: C@<seq>
    sequence:
      worker: 3
  d:
    template: D@<seq>
    sequence:
      worker: 3
      single_process: true
      url: redis://cache:6379/0
`, []string{
			`line 6: template "a": sequence.worker: worker 1024: the twitter layout has 10 bits of worker, so 0 to 1023`,
			`line 9: template "b": sequence.worker: worker -1: the sonyflake layout has 16 bits of worker, so 0 to 65535`,
			`line 13: template "c": sequence.worker: worker 3: a fixed worker id repeats ids when two processes use it (two copies of this file, two runs at once) ` +
				`or when a process restarts after the clock went back: set url to lease worker ids from a Redis, ` +
				`or single_process: true if one process alone issues with this worker id (a test, a tool)`,
			`line 19: template "d": sequence.url: not used by the snowflake backend`,
		}, []string{"a sequence.worker", "b sequence.worker", "c sequence.worker", "d sequence.url"}},
		{"snowflake leases", `templates:
  a:
    template: A@<seq>
    sequence: {backend: snowflake}
  b:
    template: B@<seq>
    sequence: {backend: snowflake, url: "http://cache"}
  c:
    template: C@<seq>
    sequence: {backend: snowflake, ledger: "oracle://db/x", prefix: "x:"}
`, []string{
			`line 4: template "a": sequence.url: the snowflake backend leases its worker id from a Redis or a database: set url ` +
				`(a Redis that runs with appendonly yes and appendfsync always) or ledger (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), ` +
				`here or in store, or a fixed worker with single_process: true`,
			`line 7: template "b": sequence.url: url "http://cache": unknown scheme "http" (want redis, redis+cluster, redis+sentinel, rediss, rediss+cluster, rediss+sentinel, unix)`,
			`line 10: template "c": sequence.prefix: not used by the snowflake backend`,
			`line 10: template "c": sequence.ledger: ledger "oracle://db/x": unknown scheme "oracle" (want etcd, etcds, mysql, postgres, postgresql: postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379)`,
		}, []string{"a sequence.url", "b sequence.url", "c sequence.prefix", "c sequence.ledger"}},
		{"snowflake floor", `templates:
  a:
    template: A@<seq>
    floor: 100
    sequence: {backend: snowflake, url: "redis://cache"}
  b:
    template: B@<seq>
    floor: 100
    sequence:
      backend: snowflake
      single_process: true
      balanced:
        members:
          - {worker: 1, layout: 41/8/12, epoch: 2024-01-01}
          - {worker: 2, layout: 41/8/12, epoch: 2024-01-01}
`, []string{
			`line 4: template "a": floor 100: the snowflake backend cannot raise a floor (its numbers are not drawn from a counter)`,
			`line 8: template "b": floor 100: the balanced snowflake backend cannot raise a floor (its numbers are not drawn from a counter)`,
		}, []string{"a floor", "b floor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sn.yaml")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			// Relative paths are resolved against the current directory.
			wd, _ := os.Getwd()
			var want []string
			for _, w := range tt.want {
				want = append(want, "config: "+path+": "+strings.ReplaceAll(w, "$DIR", wd))
			}
			err = cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil")
			}
			if diff := cmp.Diff(strings.Join(want, "\n"), err.Error()); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			var fields []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				ce := e.(*config.Error)
				if ce.File != path || ce.Line == 0 {
					t.Errorf("%v: File %q, Line %d", ce, ce.File, ce.Line)
				}
				fields = append(fields, ce.Template+" "+ce.Field)
			}
			if diff := cmp.Diff(tt.fields, fields); diff != "" {
				t.Errorf("Template and Field (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateKindsValid(t *testing.T) {
	cfg, err := config.Decode([]byte(`
store:
  backend: redis-strict
  url: redis://cache:6379/0
  ledger: postgres://sn@db/shop
templates:
  orders:
    template: SN-@<seq>
    floor: 1000
    sequence:
      queued: {lead: 20ms}
      balanced:
        rescue: 10s
        members:
          - url: redis://a:6379/0
          - url: redis://b:6379/0
          - {backend: sql}
          - {backend: bolt, path: d.db, ledger: "", step: 10}
  ids:
    template: ID-@<seq>
    sequence: {backend: snowflake, layout: sonyflake}
  test:
    template: T-@<seq>
    sequence: {backend: snowflake, layout: 40/10/12, epoch: "2025-06-01T12:00:00Z", unit: 2ms, worker: 0, single_process: true}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreOf(t *testing.T) {
	wd, _ := os.Getwd()
	cfg := config.Config{
		Store: config.Sequence{Backend: "bolt"},
		Templates: map[string]config.Template{
			"files": {Template: "F@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Options: config.Options{"path": "a.db"}}, {Options: config.Options{"path": "b.db"}}}}}},
			// A memory member forgets its numbers: the whole is not durable.
			"mixed":  {Template: "M@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Options: config.Options{"path": "a.db"}}, {Backend: "memory"}}}}},
			"fixed":  {Template: "X@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"worker": 5, "single_process": true}}},
			"leased": {Template: "L@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"url": "redis://u:pw@h:6379/0", "layout": "sonyflake"}}},
			"bad":    {Template: "B@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Options: config.Options{"path": "a.db"}}}}}},
		},
	}
	tests := []struct {
		name string
		want config.StoreInfo
		err  string
	}{
		{"files", config.StoreInfo{ID: "balanced [bolt " + wd + "/a.db; bolt " + wd + "/b.db]", Durable: true, Fields: boltFields}, ""},
		{"mixed", config.StoreInfo{ID: "balanced [bolt " + wd + "/a.db; memory]", Fields: boltFields}, ""},
		{"fixed", config.StoreInfo{ID: "snowflake twitter worker 5", NoFloor: true, Bits: 63, Fields: []string{"layout", "worker", "single_process"}}, ""},
		{"leased", config.StoreInfo{ID: `snowflake sonyflake lease redis://u:xxxxx@h:6379/0 prefix "sn:"`, Durable: true, NoFloor: true, Bits: 63, Fields: []string{"layout", "url", "prefix"}}, ""},
		{"bad", config.StoreInfo{ID: "balanced [bolt " + wd + "/a.db]", Durable: true, Fields: boltFields}, `config: template "bad": sequence.balanced.members 1 stores: want a power of two from 2 to 65536 (a member's index takes the low bits of each number)`},
		{"missing", config.StoreInfo{}, `config: template "missing": no such template`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cfg.StoreInfo(tt.name)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("StoreOf (-want +got):\n%s", diff)
			}
			if (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
				t.Errorf("StoreOf error = %v, want %q", err, tt.err)
			}
		})
	}
	got, err := cfg.StoreInfo("files", config.WithDir("/srv/sn"))
	if want := "balanced [bolt /srv/sn/a.db; bolt /srv/sn/b.db]"; err != nil || got.ID != want {
		t.Errorf("StoreOf with a directory = %q, %v; want %q", got.ID, err, want)
	}
}
