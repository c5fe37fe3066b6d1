package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/wire"
)

// failing is an Allocator that fails while down is set.
type failing struct {
	*sequence.MemoryAllocator
	down atomic.Bool
}

func (f *failing) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if f.down.Load() {
		return sequence.Range{}, errors.New("store down")
	}
	return f.MemoryAllocator.Allocate(ctx, key, n)
}

// A Generator with the option reports its numbers, errors and latency,
// and its Segment's fetches, keys and step.
func TestOption(t *testing.T) {
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	alloc := &failing{MemoryAllocator: sequence.NewMemoryAllocator()}
	seg := must(sequence.NewSegment(alloc, sequence.SegmentOptions{MinStep: 10, MaxStep: 10}))
	defer seg.Close()
	g, err := sn.New("SN-@<seq, width=6>@<v, var>", sn.WithSequence("seq", seg), sn.WithName("orders"), sn.WithMiddleware(m.Middleware()))
	if err != nil {
		t.Fatal(err)
	}
	vars := sn.Vars{"v": "x"}
	for range 25 {
		if _, err := g.Issue(ctx, sn.Request{Vars: vars}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Issue(ctx, sn.Request{N: 5, At: timeZero, Vars: vars}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); !errors.Is(err, sn.ErrVarMissing) {
		t.Fatal(err)
	}
	alloc.down.Store(true)
	issued := 30
	for range 30 { // the blocks fetched ahead run out, then calls fail
		if _, err = g.Issue(ctx, sn.Request{Vars: vars}); err != nil {
			break
		}
		issued++
	}
	if !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("with the store down: %v", err)
	}

	want := `
# HELP sn_numbers_issued_total Numbers issued by calls that succeeded (a call that fails part-way counts none).
# TYPE sn_numbers_issued_total counter
sn_numbers_issued_total{template="orders"} %d
# HELP sn_errors_total Calls that failed, by kind: the code sn serve answers with (unavailable, var_missing...).
# TYPE sn_errors_total counter
sn_errors_total{kind="unavailable",template="orders"} 1
sn_errors_total{kind="var_missing",template="orders"} 1
# HELP sn_block_fetch_errors_total Block fetches that failed.
# TYPE sn_block_fetch_errors_total counter
sn_block_fetch_errors_total{store="orders.seq"} 1
# HELP sn_keys Counter keys held in memory.
# TYPE sn_keys gauge
sn_keys{store="orders.seq"} 1
# HELP sn_block_step The size the last block fetch asked for, by whichever key fetched last.
# TYPE sn_block_step gauge
sn_block_step{store="orders.seq"} 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(want, issued)), "sn_numbers_issued_total", "sn_errors_total", "sn_block_fetch_errors_total", "sn_keys", "sn_block_step"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "sn_call_duration_seconds"); n != 1 {
		t.Errorf("sn_call_duration_seconds has %d series, want 1", n)
	}
	fetches := gauge(t, reg, "sn_block_fetches_total", "orders.seq")
	if fetches < 4 {
		t.Errorf("sn_block_fetches_total = %v; 30 numbers in blocks of 10, then a failure, take at least 4", fetches)
	}
	if s := gauge(t, reg, "sn_block_fetch_seconds_total", "orders.seq"); s <= 0 {
		t.Errorf("sn_block_fetch_seconds_total = %v", s)
	}

	m.Watch("memory", seg) // a better name for the store
	if v := gauge(t, reg, "sn_keys", "memory"); v != 1 {
		t.Errorf("after Watch, sn_keys{store=memory} = %v", v)
	}
	if _, err := metrics.New(reg); err == nil {
		t.Error("New registered the same metrics twice")
	}
	if _, err := metrics.New(nil); err == nil {
		t.Error("New(nil) accepted")
	}
}

// Each Segment and lease is reported once, however many watched stores
// reach it: a Segment under a Queued watched on its own, a snowflake Gen
// under two Queued (two templates on one lease), and a closed Gen and its
// successor on one worker id.
func TestWatchedOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	defer seg.Close()
	q, err := sequence.NewQueued(seg, sequence.QueuedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	g := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", q), sn.WithName("orders"), sn.WithMiddleware(m.Middleware()))
	if _, err := g.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.Watch("bolt /x.db", seg)
	if v := gauge(t, reg, "sn_block_fetches_total", "bolt /x.db"); v != float64(seg.Stats().Fetches) {
		t.Errorf("sn_block_fetches_total{store=bolt /x.db} = %v, want %d", v, seg.Stats().Fetches)
	}
	if n := testutil.CollectAndCount(reg, "sn_block_fetches_total"); n != 1 {
		t.Errorf("the Segment is reported as %d stores, want 1", n)
	}

	old, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Worker: 5})
	if err != nil {
		t.Fatal(err)
	}
	var qs []sequence.Gen
	for range 2 {
		qd, err := sequence.NewQueued(old, sequence.QueuedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer qd.Close()
		qs = append(qs, qd)
	}
	m.Watch("lease", qs[0])
	m.Watch("lease", qs[1])
	old.Close()
	successor, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Worker: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer successor.Close()
	sn.MustNew("ID-@<seq>", sn.WithSequence("seq", successor), sn.WithName("ids"), sn.WithMiddleware(m.Middleware())) // a rebuild
	sn.MustNew("ID-@<seq>", sn.WithSequence("seq", old), sn.WithName("ids"), sn.WithMiddleware(m.Middleware()))
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if v := read(t, reg, "sn_lease_up", "store", "ids.seq"); v != 1 {
		t.Errorf("sn_lease_up of a closed Gen and its open successor = %v, want 1", v)
	}
}

// A snowflake Gen's lease is reported.
func TestLease(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Worker: 7})
	if err != nil {
		t.Fatal(err)
	}
	m.Watch("ids", sf)
	want := `
# HELP sn_lease_up 1 while the snowflake worker id is held and the Gen issues, 0 when its lease is lost or not renewed.
# TYPE sn_lease_up gauge
sn_lease_up{store="ids",worker="7"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "sn_lease_up"); err != nil {
		t.Error(err)
	}
	sf.Close()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(strings.Replace(want, "} 1", "} 0", 1)), "sn_lease_up"); err != nil {
		t.Errorf("after Close: %v", err)
	}
}

// A config's templates report through WithTemplateOptions, each under its
// name.
func TestConfig(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Store: config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{
			"invoice": {Template: "INV-@<seq, width=6>"},
			"order":   {Template: "ORD-@<seq, width=6>"},
		},
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()),
		config.WithOptions(sn.WithMiddleware(m.Middleware())))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	for i, name := range set.Names() {
		g, _ := set.Get(name)
		if _, err := g.Issue(t.Context(), sn.Request{N: 3 + i}); err != nil {
			t.Fatal(err)
		}
	}
	if v := read(t, reg, "sn_numbers_issued_total", "template", "invoice"); v != 3 {
		t.Errorf("invoice issued %v, want 3", v)
	}
	if v := read(t, reg, "sn_numbers_issued_total", "template", "order"); v != 4 {
		t.Errorf("order issued %v, want 4", v)
	}
	if v := gauge(t, reg, "sn_keys", "invoice.seq"); v != 1 {
		t.Errorf("sn_keys of invoice.seq = %v, want 1", v)
	}
	// The two templates share one bolt file: watched under its ID, one
	// store with both keys.
	for _, name := range set.Names() {
		seq, _ := set.Gen(name)
		id, _ := set.StoreID(name)
		m.Watch(id, seq)
	}
	id, _ := set.StoreID("order")
	if v := gauge(t, reg, "sn_keys", id); v != 2 {
		t.Errorf("sn_keys{store=%q} = %v, want 2", id, v)
	}
}

// Every kind is the code sn serve answers with for the same error.
func TestKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{sn.ErrVarMissing, "var_missing"},
		{fmt.Errorf("store: %w", sequence.ErrUnavailable), "unavailable"},
		{fmt.Errorf("%w: %w", sequence.ErrUnavailable, sequence.ErrLeaseLost), "lease_lost"},
		{sequence.ErrClosed, "closed"},
		{context.DeadlineExceeded, "cancelled"},
		{errors.New("a bug"), "internal"},
	} {
		if got := metrics.Kind(c.err); got != c.want {
			t.Errorf("Kind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// A Generator with metrics allocates nothing more than without: Next its
// string, Append nothing with room, for one number and for a batch.
func TestAllocs(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	seq := sequence.NewMemory()
	plain := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", seq))
	counted := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", seq), sn.WithName("t"), sn.WithMiddleware(m.Middleware()))
	ctx := context.Background()
	var bt sn.Batch
	for _, g := range []*sn.Generator{plain, counted} {
		for _, pin := range []struct {
			name string
			want float64
			f    func()
		}{
			{"Next", 1, func() { g.Next(ctx) }},
			{"Append", 0, func() { bt.Reset(); g.Append(ctx, &bt, sn.Request{}) }},
			{"Append of 100", 0, func() { bt.Reset(); g.Append(ctx, &bt, sn.Request{N: 100}) }},
		} {
			pin.f()
			if allocs := testing.AllocsPerRun(1000, pin.f); allocs != pin.want {
				t.Errorf("%s (metrics %v) allocates %v times, want %v", pin.name, g == counted, allocs, pin.want)
			}
		}
	}
}

// BenchmarkObserve measures Append with and without metrics, side by
// side in interleaved rounds, so that the machine's load falls on both:
//
//	go test -run '^$' -bench Observe ./metrics
func BenchmarkObserve(b *testing.B) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	defer seg.Close()
	ctx := context.Background()
	contenders := []struct {
		name string
		g    *sn.Generator
	}{
		{"plain", sn.MustNew("SN-@<seq, width=12>", sn.WithSequence("seq", seg))},
		{"metrics", sn.MustNew("SN-@<seq, width=12>", sn.WithSequence("seq", seg), sn.WithName("t"), sn.WithMiddleware(m.Middleware()))},
	}
	for range 4 {
		for _, c := range contenders {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					var bt sn.Batch
					for pb.Next() {
						bt.Reset()
						if err := c.g.Append(ctx, &bt, sn.Request{}); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// A request refused before the Generator (sn.Generator.Refuse, as sn
// serve passes those it cannot read) is counted by the middleware as a
// call that failed, by the server's code; the calls the Generator
// answers as before: numbers, errors by kind, latency.
func TestMiddlewareRefused(t *testing.T) {
	ctx := t.Context()
	reg := prometheus.NewRegistry()
	m := must(metrics.New(reg))
	g := sn.MustNew("SN-@<seq>", sn.WithSequence("seq", sequence.NewMemory()), sn.WithName("orders"), sn.WithMiddleware(m.Middleware()))
	if _, err := g.Issue(ctx, sn.Request{N: 7}); err != nil {
		t.Fatal(err)
	}
	err := g.Refuse(ctx, sn.Request{N: 2000000}, wire.Error{Code: wire.CodeTooMany, Message: "n 2000000: want 1 to 1000000"})
	if !errors.Is(err, sn.ErrRefused) {
		t.Errorf("Refuse = %v, want ErrRefused", err)
	}
	if _, err := g.Issue(ctx, sn.Request{N: -1}); err == nil {
		t.Fatal("a negative n was issued")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = mt.GetCounter().GetValue() + float64(mt.GetHistogram().GetSampleCount())
		}
	}
	for key, want := range map[string]float64{
		"sn_numbers_issued_total,template=orders":       7,
		"sn_errors_total,kind=too_many,template=orders": 2,
		"sn_call_duration_seconds,template=orders":      3,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
}

// The tokens' metrics appear once tokens are read again: none for a
// program that never does; stale while the last reading failed.
func TestTokensRead(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := must(metrics.New(reg))
	if n := testutil.CollectAndCount(reg, "sn_tokens_stale", "sn_tokens_reads_total"); n != 0 {
		t.Errorf("%d token series before any reading, want none", n)
	}
	m.TokensRead(true)
	m.TokensRead(false)
	want := `
# HELP sn_tokens_reads_total Readings of the bearer tokens after the start (SIGHUP, or a changed config or tokens file), by result: ok or failed.
# TYPE sn_tokens_reads_total counter
sn_tokens_reads_total{result="failed"} 1
sn_tokens_reads_total{result="ok"} 1
# HELP sn_tokens_stale 1 when the last reading of the bearer tokens failed, so that the tokens in force are older than the files (a token meant to be revoked may still be accepted): alert on 1. 0 once a reading succeeds.
# TYPE sn_tokens_stale gauge
sn_tokens_stale 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "sn_tokens_stale", "sn_tokens_reads_total"); err != nil {
		t.Error(err)
	}
	m.TokensRead(true)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP sn_tokens_stale 1 when the last reading of the bearer tokens failed, so that the tokens in force are older than the files (a token meant to be revoked may still be accepted): alert on 1. 0 once a reading succeeds.
# TYPE sn_tokens_stale gauge
sn_tokens_stale 0
`), "sn_tokens_stale"); err != nil {
		t.Error(err)
	}
}
