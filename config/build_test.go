package config_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

func TestBuildMemory(t *testing.T) {
	ctx := t.Context()
	at := time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)
	cfg := config.Config{Templates: map[string]config.Template{
		"orders":   {Template: "@<ownerKey, value=SN>-@<seq, width=4>", Floor: 1000 - 1},
		"refunds":  {Template: "@<ownerKey, value=SN>R@<seq, width=4>"}, // shares orders' counter
		"tickets":  {Template: "QJ@<date>@<seq, width=3>"},
		"receipts": {Template: "R@<seq, width=3>", Floor: 41},
	}}
	set, err := cfg.Build(ctx, config.WithOptions(sn.WithClock(func() time.Time { return at })))
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
	if err := set.Close(); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}

// Each Build has a Memory of its own: memory numbers restart with it.
func TestBuildMemoryPerBuild(t *testing.T) {
	cfg := config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
	for run := range 2 {
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		g, _ := set.Get("a")
		if s, err := g.Next(t.Context()); err != nil || s != "A1" {
			t.Errorf("run %d: Next = %q, %v; want A1", run, s, err)
		}
		set.Close()
	}
}

// recorder is a Gen that records its life: what fakeDriver opens. It
// counts in memory.
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

// fakeStore is what fakeDriver shares between the templates of a Build:
// one per file.
type fakeStore struct {
	path string
	log  *eventLog
}

func (s *fakeStore) Close() error { s.log.add("close store " + s.path); return nil }

// fakeDriver reads path (required) and step. It opens a recorder per
// template over a fakeStore per file, and fails for the template named
// fail.
type fakeDriver struct {
	log       *eventLog
	fail      string
	closeFail bool         // the recorders' Close fails
	gen       sequence.Gen // when not nil, Open returns it
}

func (d *fakeDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: []string{"path", "step"}}
	if pathOf(t) == "" {
		return st, &config.Error{Field: "path", Err: errors.New("the fake backend needs a file")}
	}
	abs, err := t.Abs(pathOf(t))
	st.ID = "fake " + abs
	return st, err
}

func (d *fakeDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	d.log.add(fmt.Sprintf("open %s %s %s step=%d", t.Name, t.Sequence.Backend, pathOf(t), t.Sequence.Step))
	st, err := config.Share(t, "fake "+pathOf(t), func() (*fakeStore, error) {
		d.log.add("open store " + pathOf(t))
		return &fakeStore{path: pathOf(t), log: d.log}, nil
	})
	if err != nil {
		return nil, err
	}
	if t.Name == d.fail {
		return nil, errors.New("disk on fire")
	}
	if d.gen != nil {
		return d.gen, nil
	}
	r := &recorder{Memory: sequence.NewMemory(), name: t.Name, log: st.log}
	if d.closeFail {
		r.fail = errors.New(t.Name + " stuck")
	}
	return r, nil
}

func TestBuildDriver(t *testing.T) {
	ctx := t.Context()
	log := &eventLog{}
	config.RegisterForTest(t, "fake", &fakeDriver{log: log})
	cfg := config.Config{
		Store: config.Sequence{Backend: "fake", Step: 10, Options: config.Options{"path": "x.db"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Sequence: config.Sequence{Step: 20}},
			"b": {Template: "B@<seq>", Floor: 7},
			"c": {Template: "C@<seq>", Sequence: config.Sequence{Options: config.Options{"path": "y.db"}}},
			"m": {Template: "M@<seq>", Sequence: config.Sequence{Backend: "memory"}},
		},
	}
	set, err := cfg.Build(ctx)
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
		"open a fake x.db step=20",
		"open store x.db",
		"open b fake x.db step=10",
		"open c fake y.db step=10",
		"open store y.db",
		"close gen c",
		"close gen b",
		"close gen a",
		"close store y.db",
		"close store x.db",
	}
	if diff := cmp.Diff(want, log.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	ctx := t.Context()
	cfg := config.Config{
		Store: config.Sequence{Backend: "fake", Options: config.Options{"path": "x.db"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>"},
			"c": {Template: "C@<seq>"},
		},
	}
	t.Run("open fails", func(t *testing.T) {
		log := &eventLog{}
		config.RegisterForTest(t, "fake", &fakeDriver{log: log, fail: "b"})
		set, err := cfg.Build(ctx)
		if err == nil {
			set.Close()
			t.Fatal("Build: nil error")
		}
		if want := `config: template "b": fake sequence: disk on fire`; err.Error() != want {
			t.Errorf("Build error:\n got %v\nwant %s", err, want)
		}
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Template != "b" || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("errors.As(*Error) = %+v", ce)
		}
		want := []string{"open a fake x.db step=0", "open store x.db", "open b fake x.db step=0", "close gen a", "close store x.db"}
		if diff := cmp.Diff(want, log.get()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		log := &eventLog{}
		config.RegisterForTest(t, "fake", &fakeDriver{log: log})
		bad := config.Config{
			Store:     config.Sequence{Backend: "fake", Options: config.Options{"path": "x.db"}},
			Templates: map[string]config.Template{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq, width=0>"}},
		}
		_, err := bad.Build(ctx)
		if !errors.Is(err, sn.ErrTemplate) || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("Build error = %v, want ErrInvalid and ErrTemplate", err)
		}
		if got := log.get(); len(got) != 0 {
			t.Errorf("Build opened %q for an invalid config", got)
		}
	})
	t.Run("driver checks", func(t *testing.T) {
		config.RegisterForTest(t, "fake", &fakeDriver{log: &eventLog{}})
		bad := config.Config{Store: config.Sequence{Backend: "fake"}, Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Sequence: config.Sequence{Step: 5, Options: config.Options{"url": "x"}}},
		}}
		err := bad.Validate()
		want := `config: template "a": sequence.url: not used by the fake backend` + "\n" +
			`config: template "a": sequence.path: the fake backend needs a file`
		if err == nil || err.Error() != want {
			t.Errorf("Validate:\n got %v\nwant %s", err, want)
		}
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Template != "a" || ce.Field != "sequence.url" {
			t.Errorf("errors.As(*Error) = %+v, want template a, field sequence.url", ce)
		}
	})
	t.Run("floor unsupported", func(t *testing.T) {
		config.RegisterForTest(t, "fake", &fakeDriver{log: &eventLog{}, gen: nextOnly{}})
		c := config.Config{Store: config.Sequence{Backend: "fake", Options: config.Options{"path": "x"}}, Templates: map[string]config.Template{"a": {Template: "A@<seq>", Floor: 5}}}
		_, err := c.Build(ctx)
		floorErr := sn.MustNew("A@<seq>", sn.WithSequence("seq", nextOnly{})).Floor(ctx, 5)
		want := `config: template "a": floor 5: ` + floorErr.Error()
		if err == nil || err.Error() != want || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Build error:\n got %v\nwant %s, wrapping errors.ErrUnsupported", err, want)
		}
	})
	t.Run("close errors", func(t *testing.T) {
		config.RegisterForTest(t, "fake", &fakeDriver{log: &eventLog{}, closeFail: true})
		set, err := cfg.Build(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Close(); err == nil || err.Error() != "c stuck\nb stuck\na stuck" {
			t.Errorf("Close = %v, want the three errors", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		c := config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>", Floor: 5}}}
		if _, err := c.Build(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Build = %v, want context.Canceled", err)
		}
	})
}

// nextOnly is a Gen with no optional capability.
type nextOnly struct{}

func (nextOnly) Next(context.Context, string) (int64, error) { return 1, nil }

func TestBuildSharedGenClosedOnce(t *testing.T) {
	log := &eventLog{}
	shared := &recorder{Memory: sequence.NewMemory(), name: "shared", log: log}
	config.RegisterForTest(t, "fake", &fakeDriver{log: &eventLog{}, gen: shared})
	cfg := config.Config{Store: config.Sequence{Backend: "fake", Options: config.Options{"path": "x"}}, Templates: map[string]config.Template{
		"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"},
	}}
	set, err := cfg.Build(t.Context())
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

// Build hands its settings to the drivers: WithDir, WithExact,
// WithLockWait.
func TestBuildTarget(t *testing.T) {
	var got []config.Target
	config.RegisterForTest(t, "spy", spyDriver(func(t *config.Target) { got = append(got, *t) }))
	cfg := config.Config{Store: config.Sequence{Backend: "spy", Options: config.Options{"path": "x.db"}}, Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
	set, err := cfg.Build(t.Context(), config.WithDir("/srv/sn"), config.WithExact(), config.WithLockWait(-1))
	if err != nil {
		t.Fatal(err)
	}
	set.Close()
	want := config.Target{Name: "a", Sequence: config.Sequence{Backend: "spy", Options: config.Options{"path": "x.db"}}, Dir: "/srv/sn", Exact: true, LockWait: -1}
	if len(got) != 2 || !cmp.Equal(got[0], want, cmpIgnoreShares) || !cmp.Equal(got[1], want, cmpIgnoreShares) {
		t.Errorf("targets of Check and Open = %+v, want twice %+v", got, want)
	}
	if abs, err := want.Abs("x.db"); err != nil || abs != filepath.Join("/srv/sn", "x.db") {
		t.Errorf("Abs = %q, %v", abs, err)
	}
}

var cmpIgnoreShares = cmp.Comparer(func(a, b config.Target) bool {
	return a.Name == b.Name && cmp.Equal(a.Sequence, b.Sequence, cmpopts.IgnoreUnexported(config.Sequence{})) && a.Dir == b.Dir && a.Exact == b.Exact && a.LockWait == b.LockWait
})

// spyDriver calls itself with the Target of each Check and Open.
type spyDriver func(*config.Target)

func (f spyDriver) Check(t *config.Target) (config.StoreInfo, error) {
	f(t)
	return config.StoreInfo{ID: "spy", Durable: true, Fields: []string{"path"}}, nil
}

func (f spyDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	f(t)
	return sequence.NewMemory(), nil
}

func TestShare(t *testing.T) {
	if _, err := config.Share(&config.Target{}, "k", func() (int, error) { return 1, nil }); err == nil || err.Error() != `config: Share "k" outside Build` {
		t.Errorf("Share outside Build = %v", err)
	}
	// Two drivers that share a key with different types.
	config.RegisterForTest(t, "ints", shareDriver[int]{})
	config.RegisterForTest(t, "strings", shareDriver[string]{})
	cfg := config.Config{Templates: map[string]config.Template{
		"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "ints"}},
		"b": {Template: "B@<seq>", Sequence: config.Sequence{Backend: "strings"}},
	}}
	_, err := cfg.Build(t.Context())
	if want := `config: template "b": strings sequence: config: Share "same": the key holds a value of type int, not string`; err == nil || err.Error() != want {
		t.Errorf("Build = %v, want %s", err, want)
	}
}

// shareDriver shares a zero T under the key "same".
type shareDriver[T any] struct{}

func (shareDriver[T]) Check(*config.Target) (config.StoreInfo, error) {
	return config.StoreInfo{ID: "same", Durable: true}, nil
}

func (shareDriver[T]) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	_, err := config.Share(t, "same", func() (T, error) { var v T; return v, nil })
	return sequence.NewMemory(), err
}

// Templates that print the same strings from different counters are
// refused as a set, naming the templates.
func TestBuildAmbiguousSet(t *testing.T) {
	config.RegisterForTest(t, "fake", &fakeDriver{log: &eventLog{}})
	cfg := config.Config{Templates: map[string]config.Template{
		"a": {Template: "A@<seq>"},
		"b": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "fake", Options: config.Options{"path": "x.db"}}},
		"c": {Template: "C@<seq>"},
	}}
	gen := func(text string) *sn.Generator { return sn.MustNew(text, sn.WithSequence("seq", sequence.NewMemory())) }
	pairErr := sn.CheckSet([]sn.Member{{Name: "a", Gen: gen("A@<seq>"), Store: "memory"}, {Name: "b", Gen: gen("A@<seq>"), Store: "other"}})
	if pairErr == nil {
		t.Fatal("sn.CheckSet accepts A@<seq> in two stores, which print the same strings from two counters")
	}
	want := `config: template "a": ` + pairErr.Error()
	for _, check := range []func() error{
		func() error { return cfg.Validate() },
		func() error { _, err := cfg.Build(t.Context()); return err },
	} {
		err := check()
		if err == nil || err.Error() != want {
			t.Errorf("error:\n got %v\nwant %s", err, want)
		}
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Template != "a" || ce.Field != "template" || !errors.Is(err, config.ErrInvalid) {
			t.Errorf("errors.As(*Error) = %+v", ce)
		}
	}
}

func TestSetConcurrentUse(t *testing.T) {
	ctx := t.Context()
	cfg := config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"}}}
	set, err := cfg.Build(ctx)
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

// pathOf and urlOf read the fields path and url of t's sequence, as the
// test drivers do.
func pathOf(t *config.Target) string {
	var o struct {
		Path string `yaml:"path"`
	}
	t.Decode(&o)
	return o.Path
}

func urlOf(t *config.Target) string {
	var o struct {
		URL string `yaml:"url"`
	}
	t.Decode(&o)
	return o.URL
}
