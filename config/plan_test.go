package config_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/snowflake"
)

// This file tests queued, balanced and the snowflake backend's fields:
// how they are read, checked and built.

func TestParseKinds(t *testing.T) {
	want := &config.Config{
		Store: config.Sequence{Backend: "redis-strict", Queued: &config.Queue{Lead: "20ms", Max: 1000}, Options: config.Options{"ledger": "postgres://sn@db/shop"}},
		Templates: map[string]config.Template{
			"orders": {Template: "SN-@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{
				Rescue: "10s", Timeout: "200ms",
				Members: []config.Sequence{{Options: config.Options{"url": "redis://a:6379/0"}}, {Queued: &config.Queue{Lead: "5ms"}, Options: config.Options{"url": "redis://b:6379/0"}}},
			}}},
			"ids":   {Template: "ID-@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"url": "redis://a:6379/0", "layout": "sonyflake"}}},
			"test":  {Template: "T-@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"layout": "41/10/12", "epoch": "2024-01-01", "unit": "1ms", "worker": 0, "single_process": true}}},
			"queue": {Template: "Q-@<seq>", Sequence: config.Sequence{Queued: &config.Queue{}}},
		},
	}
	tests := []struct{ name, format, data string }{
		{"yaml", "yaml", `
store:
  backend: redis-strict
  ledger: postgres://sn@db/shop
  queued:
    lead: 20ms
    max: 1000
templates:
  orders:
    template: SN-@<seq>
    sequence:
      balanced:
        rescue: 10s
        timeout: 200ms
        members:
          - url: redis://a:6379/0
          - url: redis://b:6379/0
            queued:
              lead: 5ms
  ids:
    template: ID-@<seq>
    sequence:
      backend: snowflake
      url: redis://a:6379/0
      layout: sonyflake
  test:
    template: T-@<seq>
    sequence:
      backend: snowflake
      layout: 41/10/12
      epoch: 2024-01-01
      unit: 1ms
      worker: 0
      single_process: true
  queue:
    template: Q-@<seq>
    sequence:
      queued: {}
`},
		{"yaml flow", "yaml", `
store: {backend: redis-strict, ledger: "postgres://sn@db/shop", queued: {lead: 20ms, max: 1000}}
templates:
  orders: {template: SN-@<seq>, sequence: {balanced: {rescue: 10s, timeout: 200ms, members: [{url: "redis://a:6379/0"}, {url: "redis://b:6379/0", queued: {lead: 5ms}}]}}}
  ids: {template: ID-@<seq>, sequence: {backend: snowflake, url: "redis://a:6379/0", layout: sonyflake}}
  test: {template: T-@<seq>, sequence: {backend: snowflake, layout: 41/10/12, epoch: 2024-01-01, unit: 1ms, worker: 0, single_process: true}}
  queue: {template: Q-@<seq>, sequence: {queued: {}}}
`},
		{"json", "json", `{
  "store": {"backend": "redis-strict", "ledger": "postgres://sn@db/shop", "queued": {"lead": "20ms", "max": 1000}},
  "templates": {
    "orders": {"template": "SN-@<seq>", "sequence": {"balanced": {"rescue": "10s", "timeout": "200ms",
      "members": [{"url": "redis://a:6379/0"}, {"url": "redis://b:6379/0", "queued": {"lead": "5ms"}}]}}},
    "ids": {"template": "ID-@<seq>", "sequence": {"backend": "snowflake", "url": "redis://a:6379/0", "layout": "sonyflake"}},
    "test": {"template": "T-@<seq>", "sequence": {"backend": "snowflake", "layout": "41/10/12", "epoch": "2024-01-01",
      "unit": "1ms", "worker": 0, "single_process": true}},
    "queue": {"template": "Q-@<seq>", "sequence": {"queued": {}}}
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
			// A template's queued and balanced replace the store's field
			// by field; the store's are not changed.
			seq, _ := got.Sequence("orders")
			if w := (config.Queue{Lead: "20ms", Max: 1000}); seq.Queued == nil || *seq.Queued != w {
				t.Errorf("orders: queued %+v, want the store's %+v", seq.Queued, w)
			}
			seq, _ = got.Sequence("queue")
			if w := (config.Queue{Lead: "20ms", Max: 1000}); seq.Queued == nil || *seq.Queued != w || seq.Queued == got.Store.Queued {
				t.Errorf("queue: queued %+v, want a copy of the store's %+v", seq.Queued, w)
			}
		})
	}
}

// sequenceFields are the fields of a sequence that package config reads,
// as type errors list them.
const sequenceFields = "backend, balanced, fetch_timeout, idle, max_step, min_step, prefetch, queued, step, target"

// A mistake Parse can see is its error; one in a backend's own fields,
// which its driver reads, is Validate's.

func TestParseKindsErrors(t *testing.T) {
	tests := []struct{ name, format, data, want string }{
		{"yaml unknown field in queued", "yaml", "templates:\n  a:\n    sequence:\n      queued: {leed: 5ms}\n",
			`config: line 4: template "a": unknown field "sequence.queued.leed" (known: idle, lead, max, min)`},
		{"yaml unknown field in a member", "yaml", "templates:\n  a:\n    template: A@<seq>\n    sequence:\n      backend: bolt\n      balanced:\n        members:\n          - path: a.db\n          - {path: b.db, urll: redis://b}\n",
			`config: line 9: template "a": sequence.balanced.members[1].urll: not used by the bolt backend`},
		{"yaml unknown field in the store's members", "yaml", "store:\n  backend: bolt\n  balanced: {members: [{path: a.db}, {pth: b.db}]}\ntemplates:\n  a: {template: A@<seq>}\n",
			"config: line 5: template \"a\": sequence.balanced.members[1].pth: not used by the bolt backend; did you mean path?\n" +
				`config: line 5: template "a": sequence.balanced.members[1].path: the bolt backend needs a file (set path here or in store)`},
		{"yaml unknown field in balanced", "yaml", "store:\n  balanced:\n    rescu: 1s\n",
			`config: line 3: unknown field "store.balanced.rescu" (known: members, rescue, timeout)`},
		{"yaml wrong type in a member", "yaml", "templates:\n  a:\n    sequence:\n      balanced:\n        members:\n          - {step: x}\n",
			`config: line 6: template "a": sequence.balanced.members[0].step: want a whole number, found "x"`},
		{"yaml members as a mapping", "yaml", "templates:\n  a:\n    sequence:\n      balanced:\n        members: {url: redis://a}\n",
			`config: line 5: template "a": sequence.balanced.members: want a list of sequences, each a mapping with the fields ` + sequenceFields + `, found a mapping`},
		{"yaml member as a string", "yaml", "templates:\n  a:\n    sequence:\n      balanced:\n        members:\n          - redis://a\n",
			`config: line 6: template "a": sequence.balanced.members[0]: want a mapping with the fields ` + sequenceFields + `, found "redis://a"`},
		{"yaml queued as a bool", "yaml", "store:\n  queued: true\n",
			`config: line 2: store.queued: want a mapping with the fields idle, lead, max, min, found true`},
		{"yaml fraction of a worker", "yaml", "templates:\n  a:\n    template: A@<seq>\n    sequence:\n      backend: snowflake\n      worker: 1.5\n",
			`config: line 6: template "a": sequence.worker: want a whole number, found 1.5`},
		{"yaml fraction of a queue", "yaml", "templates:\n  a:\n    sequence:\n      queued:\n        min: 2.5\n",
			`config: line 5: template "a": sequence.queued.min: want a whole number, found 2.5`},
		{"yaml member key twice", "yaml", "templates:\n  a:\n    sequence:\n      balanced:\n        members:\n          - url: redis://a\n            url: redis://b\n",
			`config: line 7: template "a": sequence.balanced.members[0].url: given twice (first at line 6)`},
		{"json unknown field in a member", "json", "{\"templates\": {\"a\": {\"template\": \"A@<seq>\", \"sequence\": {\"backend\": \"bolt\", \"balanced\": {\"members\": [{\"path\": \"a.db\"},\n{\"path\": \"b.db\", \"urll\": \"x\"}]}}}}}",
			`config: line 2: template "a": sequence.balanced.members[1].urll: not used by the bolt backend`},
		{"json wrong type in a member", "json", "{\"templates\": {\"a\": {\"sequence\": {\"balanced\": {\"members\": [\n{\"step\": \"x\"}]}}}}}",
			`config: line 2: template "a": sequence.balanced.members[0].step: want a whole number, found "x"`},
		{"json members as an object", "json", "{\"store\": {\"balanced\": {\n\"members\": {\"url\": \"x\"}}}}",
			`config: line 2: store.balanced.members: want a list of sequences, each an object with the fields ` + sequenceFields + `, found an object`},
		{"json worker as a string", "json", "{\"store\": {\"backend\": \"snowflake\", \"worker\": \"3\"},\n\"templates\": {\"a\": {\"template\": \"A@<seq>\"}}}",
			`config: line 1: store.worker: want a whole number, found "3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { decodeRefuses(t, tt.data, tt.format, tt.want) })
	}
}

// The store of a balanced sequence is its members', in order: templates
// that print alike share a counter only over the same members in the same
// order. Over other stores, or the members in another order, the same
// value is another number, so they must print apart.
func TestBalancedStoreIdentity(t *testing.T) {
	balanced := func(paths ...string) config.Sequence {
		s := config.Sequence{Backend: "bolt", Balanced: &config.Balance{}}
		for _, p := range paths {
			s.Balanced.Members = append(s.Balanced.Members, config.Sequence{Options: config.Options{"path": p}})
		}
		return s
	}
	tests := []struct {
		name string
		a, b config.Sequence
		ok   bool
	}{
		{"same members", balanced("a.db", "b.db"), balanced("a.db", "b.db"), true},
		{"members in another order", balanced("a.db", "b.db"), balanced("b.db", "a.db"), false},
		{"one of the members alone", balanced("a.db", "b.db"), config.Sequence{Backend: "bolt", Options: config.Options{"path": "a.db"}}, false},
		{"more members", balanced("a.db", "b.db"), balanced("a.db", "b.db", "c.db", "d.db"), false},
		// A queue does not change what a number means.
		{"one queued", balanced("a.db", "b.db"), func() config.Sequence { s := balanced("a.db", "b.db"); s.Queued = &config.Queue{}; return s }(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Config{Templates: map[string]config.Template{
				"a": {Template: "@<ownerKey, value=SN>-@<seq>", Sequence: tt.a},
				"b": {Template: "@<ownerKey, value=SN>-@<seq>", Sequence: tt.b},
			}}
			err := cfg.Validate()
			switch {
			case tt.ok && err != nil:
				t.Errorf("Validate: %v", err)
			case !tt.ok && !errors.Is(err, sn.ErrAmbiguous):
				t.Errorf("Validate = %v, want sn.ErrAmbiguous", err)
			}
		})
	}
}

// issueAll draws n numbers from each of the templates names of set, from
// goroutines goroutines at once, and returns them all, in the order each
// goroutine drew them.
func issueAll(t *testing.T, set *config.Set, names []string, goroutines, n int) [][]string {
	t.Helper()
	out := make([][]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, ok := set.Get(names[i%len(names)])
			if !ok {
				t.Errorf("no template %q", names[i%len(names)])
				return
			}
			for range n {
				s, err := g.Next(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				out[i] = append(out[i], s)
			}
		}()
	}
	wg.Wait()
	return out
}

// repeats counts the strings of got seen before, in got or in seen, and
// adds them to seen.
func repeats(seen map[string]bool, got [][]string) int {
	n := 0
	for _, ss := range got {
		for _, s := range ss {
			if seen[s] {
				n++
			}
			seen[s] = true
		}
	}
	return n
}

// number reads the number after prefix in s.
func number(t *testing.T, s, prefix string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimPrefix(s, prefix), 10, 64)
	if err != nil || !strings.HasPrefix(s, prefix) {
		t.Fatalf("%q: not %s and a number", s, prefix)
	}
	return n
}

// A queue in front of the store: each key's numbers above the floor, in
// increasing order for each caller, never twice.
func TestBuildQueued(t *testing.T) {
	cfg := config.Config{Templates: map[string]config.Template{
		"a": {Template: "A@<seq>", Floor: 100, Sequence: config.Sequence{Queued: &config.Queue{Min: 4, Max: 8, Lead: "1ms"}}},
	}}
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := issueAll(t, set, []string{"a"}, 8, 2000)
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if n := repeats(map[string]bool{}, got); n != 0 {
		t.Errorf("%d repeats in %d numbers", n, 8*2000)
	}
	for _, ss := range got {
		prev := int64(100)
		for _, s := range ss {
			if n := number(t, s, "A"); n <= prev {
				t.Fatalf("%s after A%d: want numbers above the floor, increasing", s, prev)
			} else {
				prev = n
			}
		}
	}
}

// Under WithExact there is no queue: a run reserves exactly what it
// issues, and the next run goes on without a gap. (A queue would have
// drawn at least its Min, 16, ahead.)
func TestBuildQueuedExact(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Config{
		Store:     config.Sequence{Backend: "bolt", Queued: &config.Queue{}, Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{"a": {Template: "A@<seq>", Floor: 100}},
	}
	var got []string
	for range 2 {
		set, err := cfg.Build(t.Context(), config.WithDir(dir), config.WithExact())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, issueAll(t, set, []string{"a"}, 1, 3)[0]...)
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"A101", "A102", "A103", "A104", "A105", "A106"}; !cmp.Equal(got, want) {
		t.Errorf("numbers = %q, want %q", got, want)
	}
}

// Balanced over two bolt files: number = value<<1 | member, above the
// floor, never twice, across runs; the members take turns.
func TestBuildBalanced(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Config{
		Store: config.Sequence{Backend: "bolt", Step: 10},
		Templates: map[string]config.Template{
			"b": {Template: "@<ownerKey, value=B>@<seq>", Floor: 1000, Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Options: config.Options{"path": "a.db"}}, {Queued: &config.Queue{}, Options: config.Options{"path": "b.db"}}}}}},
			// The same members, in the same order, and the same counter
			// key: the same counters as b's.
			"c": {Template: "@<ownerKey, value=B>@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Options: config.Options{"path": "a.db"}}, {Options: config.Options{"path": "b.db"}}}}}},
		},
	}
	seen := map[string]bool{}
	for run := range 2 {
		set, err := cfg.Build(t.Context(), config.WithDir(dir), config.WithLockWait(-1))
		if err != nil {
			t.Fatal(err)
		}
		got := issueAll(t, set, []string{"b", "c"}, 8, 500)
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		if n := repeats(seen, got); n != 0 {
			t.Errorf("run %d: %d repeats in %d numbers", run, n, 8*500)
		}
		var byMember [2]int
		for _, ss := range got {
			for _, s := range ss {
				n := number(t, s, "B")
				if n <= 1000 {
					t.Errorf("run %d: %s at or below the floor", run, s)
				}
				byMember[n&1]++
			}
		}
		if byMember[0] < 1500 || byMember[1] < 1500 {
			t.Errorf("run %d: %d numbers from member 0 and %d from member 1, want about 2000 each", run, byMember[0], byMember[1])
		}
	}
	if len(seen) != 2*8*500 {
		t.Errorf("%d numbers, want %d", len(seen), 2*8*500)
	}
}

// down is a backend whose sequences always fail.
type down struct{}

func (down) Check(t *config.Target) (config.StoreInfo, error) {
	return config.StoreInfo{ID: "down " + pathOf(t), Durable: true, Fields: []string{"path"}}, nil
}

func (down) Open(context.Context, *config.Target) (sequence.Gen, error) { return failing{}, nil }

type failing struct{}

func (failing) Next(context.Context, string) (int64, error) {
	return 0, fmt.Errorf("%w: disk on fire", sequence.ErrUnavailable)
}

// A member that fails is skipped: numbers come from the others. When all
// fail, the error wraps sequence.ErrUnavailable and names each.
func TestBuildBalancedFailover(t *testing.T) {
	config.RegisterForTest(t, "down", down{})
	cfg := config.Config{Templates: map[string]config.Template{
		"half": {Template: "H@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Rescue: "1h",
			Members: []config.Sequence{{Backend: "down", Options: config.Options{"path": "x"}}, {Backend: "memory", Queued: &config.Queue{}}}}}},
		"none": {Template: "N@<seq>", Sequence: config.Sequence{Backend: "down", Balanced: &config.Balance{
			Members: []config.Sequence{{Options: config.Options{"path": "x"}}, {Options: config.Options{"path": "y"}}}}}},
	}}
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	got := issueAll(t, set, []string{"half"}, 4, 250)
	if n := repeats(map[string]bool{}, got); n != 0 {
		t.Errorf("%d repeats", n)
	}
	for _, ss := range got {
		for _, s := range ss {
			if n := number(t, s, "H"); n&1 != 1 {
				t.Fatalf("%s: from the member that is down", s)
			}
		}
	}
	none, _ := set.Get("none")
	_, err = none.Next(t.Context())
	if !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "Gens of a Balanced failed: Gen 1: ") {
		t.Errorf("Next with every member down = %v, want sequence.ErrUnavailable naming both", err)
	}
}

// A fixed worker id: the templates of one layout share one Gen, so their
// ids never meet; each id reads back to the worker and the time.
func TestBuildSnowflakeFixed(t *testing.T) {
	layout := snowflake.Layout{TimeBits: 40, WorkerBits: 10, SeqBits: 12, Epoch: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), Unit: 2 * time.Millisecond}
	fixed := config.Sequence{Backend: "snowflake", Options: config.Options{"worker": 7, "single_process": true}}
	cfg := config.Config{
		Store: fixed,
		Templates: map[string]config.Template{
			"a": {Template: "@<ownerKey, value=ID>-@<seq>"},
			"b": {Template: "@<ownerKey, value=ID>-@<seq, key=unit>@<unit, chars=a-z, var>"},
			"q": {Template: "@<ownerKey, value=ID>-@<seq>", Sequence: config.Sequence{Queued: &config.Queue{Min: 64}}},
			"x": {Template: "X-@<seq>", Sequence: config.Sequence{Options: config.Options{"layout": "40/10/12", "epoch": "2025-06-01T12:00:00Z", "unit": "2ms", "worker": 0}}},
		},
	}
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := issueAll(t, set, []string{"a", "q"}, 8, 2000)
	b, _ := set.Get("b")
	for _, unit := range []string{"x", "y", "x"} {
		nums, err := b.Issue(t.Context(), sn.Request{Vars: sn.Vars{"unit": unit}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, []string{strings.TrimSuffix(nums[0], unit)})
	}
	if n := repeats(map[string]bool{}, got); n != 0 {
		t.Errorf("%d repeats in %d ids", n, 8*2000+3)
	}
	for _, ss := range got {
		for _, s := range ss {
			id, err := snowflake.Twitter.Decompose(number(t, s, "ID-"))
			if err != nil || id.Worker != 7 || id.Time.Before(start.Add(-time.Millisecond)) || id.Time.After(time.Now()) {
				t.Fatalf("%s: %+v, %v; want worker 7 at about now", s, id, err)
			}
		}
	}
	x := issueAll(t, set, []string{"x"}, 1, 3)[0]
	for _, s := range x {
		id, err := layout.Decompose(number(t, s, "X-"))
		if err != nil || id.Worker != 0 || id.Time.Before(start.Add(-2*time.Millisecond)) || id.Time.After(time.Now()) {
			t.Errorf("%s: %+v, %v; want worker 0 at about now in the 40/10/12 layout", s, id, err)
		}
	}
	if err := set.Close(); err != nil {
		t.Fatalf("Close: %v (a Gen closed twice?)", err)
	}
}

// plain is a backend whose Check returns an error that is not a
// *config.Error, and whose Open fails for the path "bad".
type plain struct{}

func (plain) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{ID: "plain " + pathOf(t), Durable: true, Fields: []string{"path"}}
	if pathOf(t) == "" {
		return st, errors.New("boom")
	}
	return st, nil
}

func (plain) Open(_ context.Context, t *config.Target) (sequence.Gen, error) {
	if pathOf(t) == "bad" {
		return nil, errors.New("disk on fire")
	}
	return sequence.NewMemory(), nil
}

func TestKindsDriverErrors(t *testing.T) {
	config.RegisterForTest(t, "plain", plain{})
	cfg := config.Config{Templates: map[string]config.Template{
		"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "plain"}},
		"b": {Template: "B@<seq>", Sequence: config.Sequence{Backend: "plain", Balanced: &config.Balance{Members: []config.Sequence{{}, {Options: config.Options{"path": "x"}}}}}},
	}}
	want := `config: template "a": plain sequence: boom` + "\n" +
		`config: template "b": sequence.balanced.members[0]: plain sequence: boom`
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate:\n got %v\nwant %s", err, want)
	}

	// A member that fails to open: what was opened before it is closed.
	dir := t.TempDir()
	cfg = config.Config{Templates: map[string]config.Template{
		"c": {Template: "C@<seq>", Sequence: config.Sequence{Balanced: &config.Balance{Members: []config.Sequence{{Backend: "bolt", Options: config.Options{"path": "a.db"}}, {Backend: "plain", Options: config.Options{"path": "bad"}}}}}},
	}}
	_, err := cfg.Build(t.Context(), config.WithDir(dir))
	if want := `config: template "c": sequence.balanced.members[1]: plain sequence: disk on fire`; err == nil || err.Error() != want {
		t.Errorf("Build:\n got %v\nwant %s", err, want)
	}
	st, err := boltseq.Open(filepath.Join(dir, "a.db"), boltseq.Options{LockTimeout: -1})
	if err != nil {
		t.Fatalf("a.db still open after the failed Build: %v", err)
	}
	st.Close()
}

// boltFields are the fields the bolt backend reads, and so a balanced
// sequence of bolt members.
var boltFields = []string{"path", "step", "min_step", "max_step", "prefetch", "target", "fetch_timeout", "idle"}
