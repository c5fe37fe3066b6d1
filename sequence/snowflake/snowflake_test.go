package snowflake_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestLayoutValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		l    snowflake.Layout
		want string // "" for valid
	}{
		{"twitter", snowflake.Twitter, ""},
		{"sonyflake", snowflake.Sonyflake, ""},
		{"no worker bits", snowflake.Layout{TimeBits: 41, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, "at least one bit"},
		{"64 bits", snowflake.Layout{TimeBits: 42, WorkerBits: 10, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}, "an id has 63"},
		{"tiny unit", snowflake.Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Nanosecond}, "at least 1µs"},
		{"no epoch", snowflake.Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 12, Unit: time.Millisecond}, "no epoch"},
		{"future epoch", snowflake.Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 12, Epoch: now.Add(time.Hour), Unit: time.Millisecond}, "is after now"},
		{"too small", snowflake.Layout{TimeBits: 30, WorkerBits: 10, SeqBits: 12, Epoch: now.Add(-time.Hour), Unit: time.Millisecond}, "less than 10 years from now"},
		{"ending soon", snowflake.Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 12, Epoch: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), Unit: time.Millisecond}, "end on 2029"},
	} {
		err := tt.l.Validate(now)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want ErrInvalidArgument saying %q", tt.name, err, tt.want)
		}
	}
	if got := snowflake.Twitter.End().UTC().Year(); got != 2080 {
		t.Errorf("Twitter layout ends in %d; want 2080", got)
	}
	if got := snowflake.Sonyflake.End().UTC().Year(); got != 2199 {
		t.Errorf("Sonyflake layout ends in %d; want 2199", got)
	}
	if got := snowflake.Twitter.Limit(); got != 4_096_000 {
		t.Errorf("Twitter limit %v ids/s; want 4096000", got)
	}
}

// fixed returns a Gen over a clock the test sets.
type manual struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manual) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manual) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *manual) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newManual(t time.Time) *manual   { return &manual{t: t} }
func mustGen(t *testing.T, l snowflake.Layout, o snowflake.Options) *snowflake.Gen {
	t.Helper()
	g, err := snowflake.New(context.Background(), l, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// The presets put the bits where bwmarrin/snowflake and sonyflake do, and
// Decompose reads every id back.
func TestPresetsBits(t *testing.T) {
	clock := newManual(now)
	tw := mustGen(t, snowflake.Twitter, snowflake.Options{Worker: 5, Now: clock.Now})
	id, err := tw.Next(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli() - 1288834974657
	if want := ms<<22 | 5<<12; id != want {
		t.Errorf("Twitter id %d; want %d (ms<<22 | worker<<12 | seq)", id, want)
	}
	sf := mustGen(t, snowflake.Sonyflake, snowflake.Options{Worker: 7, Now: clock.Now})
	sf.Next(context.Background(), "")
	id, _ = sf.Next(context.Background(), "")
	units := now.Sub(snowflake.Sonyflake.Epoch).Milliseconds() / 10
	if want := units<<24 | 1<<16 | 7; id != want {
		t.Errorf("Sonyflake id %d; want %d (units<<24 | seq<<16 | worker)", id, want)
	}

	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range []snowflake.Layout{snowflake.Twitter, snowflake.Sonyflake, {TimeBits: 40, WorkerBits: 3, SeqBits: 20, Epoch: now.Add(-time.Hour), Unit: time.Second}} {
		for range 10_000 {
			tick, worker, seq := r.Int64N(1<<30), r.Int64N(l.Workers()), r.Int64N(1<<l.SeqBits)
			id := tick<<(l.WorkerBits+l.SeqBits) | worker<<l.SeqBits | seq
			if l.SeqBeforeWorker {
				id = tick<<(l.WorkerBits+l.SeqBits) | seq<<l.WorkerBits | worker
			}
			d, err := l.Decompose(id)
			if err != nil {
				t.Fatal(err)
			}
			if want := (snowflake.ID{Time: l.Epoch.Add(time.Duration(tick) * l.Unit), Worker: worker, Seq: seq}); d != want {
				t.Fatalf("Decompose(%d) = %+v; want %+v", id, d, want)
			}
		}
	}
	if _, err := snowflake.Twitter.Decompose(-1); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Decompose(-1): %v", err)
	}
}

func TestConformance(t *testing.T) {
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		g, err := snowflake.New(context.Background(), snowflake.Twitter, snowflake.Options{Worker: 1})
		if err != nil {
			t.Fatal(err)
		}
		return g
	})
}

// When every sequence of a unit is used, Next waits for the next unit.
func TestExhaustionWaits(t *testing.T) {
	clock := newManual(now)
	l := snowflake.Layout{TimeBits: 41, WorkerBits: 10, SeqBits: 2, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	g := mustGen(t, l, snowflake.Options{Worker: 3, Now: clock.Now})
	ctx := context.Background()
	var last int64
	for i := range 4 {
		id, err := g.Next(ctx, "")
		if err != nil || id <= last {
			t.Fatalf("id %d: %d, %v", i, id, err)
		}
		last = id
	}
	got := make(chan int64)
	go func() {
		id, err := g.Next(ctx, "")
		if err != nil {
			t.Error(err)
		}
		got <- id
	}()
	select {
	case id := <-got:
		t.Fatalf("a fifth id %d in a unit of four sequences", id)
	case <-time.After(20 * time.Millisecond):
	}
	clock.Add(time.Millisecond)
	id := <-got
	d, _ := l.Decompose(id)
	if !d.Time.Equal(now.Add(time.Millisecond).Truncate(time.Millisecond)) || d.Seq != 0 || d.Worker != 3 {
		t.Errorf("the id after the wait: %+v; want the next millisecond, sequence 0", d)
	}
}

// A clock step back within MaxWait goes on above the last id; a longer one
// is ErrClockRollback, and nothing repeats once the clock is back.
func TestClockRollback(t *testing.T) {
	clock := newManual(now)
	g := mustGen(t, snowflake.Twitter, snowflake.Options{Worker: 1, Now: clock.Now, MaxWait: 5 * time.Millisecond})
	ctx := context.Background()
	seen := map[int64]bool{}
	var last int64
	take := func(what string) error {
		id, err := g.Next(ctx, "")
		if err != nil {
			return err
		}
		if seen[id] || id <= last {
			t.Fatalf("%s: id %d after %d (seen before: %v)", what, id, last, seen[id])
		}
		seen[id], last = true, id
		return nil
	}
	for range 10 {
		take("before")
	}
	clock.Add(-3 * time.Millisecond)
	for range 10 {
		if err := take("3ms back"); err != nil {
			t.Fatalf("3ms back with MaxWait 5ms: %v", err)
		}
	}
	clock.Add(-time.Second)
	if err := take("1s back"); !errors.Is(err, sequence.ErrClockRollback) {
		t.Fatalf("1s back: %v; want ErrClockRollback", err)
	}
	clock.Add(time.Second + 3*time.Millisecond)
	for range 10 {
		if err := take("after"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(snowflake.Twitter.Epoch.Add(-time.Hour))
	if err := take("before the epoch"); !errors.Is(err, sequence.ErrClockRollback) {
		t.Errorf("a clock before the epoch: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	ctx := context.Background()
	if _, err := snowflake.New(ctx, snowflake.Twitter, snowflake.Options{Worker: 1024}); !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(err.Error(), "0 to 1023") {
		t.Errorf("worker 1024 of 10 bits: %v", err)
	}
	if _, err := snowflake.New(ctx, snowflake.Layout{}, snowflake.Options{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("zero layout: %v", err)
	}
	g := mustGen(t, snowflake.Twitter, snowflake.Options{})
	got, err := g.NextN(ctx, "", []int64{-1}, 3)
	if err != nil || len(got) != 4 || got[1] >= got[2] || got[2] >= got[3] {
		t.Errorf("NextN: %v, %v", got, err)
	}
}

// In a template, @<id> prints the id, Parse reads it back, and Decompose
// gives its time and worker.
func TestInTemplate(t *testing.T) {
	clock := newManual(now)
	g := mustGen(t, snowflake.Twitter, snowflake.Options{Worker: 9, Now: clock.Now})
	orders, err := sn.New(`ORD-@<id>`, sn.WithSequence("id", g))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nums, err := orders.Issue(ctx, sn.Request{N: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range nums {
		p, err := orders.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := snowflake.Twitter.Decompose(p.Seq)
		if err != nil || d.Worker != 9 || !d.Time.Equal(now) {
			t.Errorf("%s: %+v, %v; want worker 9 at %v", s, d, err, now)
		}
	}
}

// A Gen with a fixed worker answers Ping until it is closed.
func TestPing(t *testing.T) {
	g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	g.Close()
	if err := g.Ping(t.Context()); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Ping after Close: %v; want ErrClosed", err)
	}
}

// testLease is a Leaser of one id whose renewals fail once lost is set.
type testLease struct{ lost atomic.Bool }

func (l *testLease) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	return l, nil
}
func (l *testLease) Worker() int64    { return 3 }
func (l *testLease) Bound() time.Time { return time.Now().Add(-time.Hour) }
func (l *testLease) Renew(ctx context.Context, bound time.Time) error {
	if l.lost.Load() {
		return fmt.Errorf("%w: test", sequence.ErrLeaseLost)
	}
	return nil
}
func (l *testLease) Release(ctx context.Context, bound time.Time) error { return nil }

// LeaseInfo tells a worker id given by hand from a leased one, and a lease
// that is held from one that is lost.
func TestLeaseInfo(t *testing.T) {
	g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Worker: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if li := g.LeaseInfo(); li.Worker != 5 || li.Leased || li.Err != nil {
		t.Errorf("LeaseInfo by hand = %+v", li)
	}
	l := &testLease{}
	lg, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: l, TTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	if li := lg.LeaseInfo(); li.Worker != 3 || !li.Leased || li.Err != nil || !li.Valid.After(time.Now()) {
		t.Errorf("LeaseInfo leased = %+v", li)
	}
	l.lost.Store(true)
	for range 100 { // the renewals run every TTL/4 or so: bounded
		if lg.LeaseInfo().Err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if li := lg.LeaseInfo(); !errors.Is(li.Err, sequence.ErrUnavailable) {
		t.Errorf("LeaseInfo after the lease was lost = %+v, want ErrUnavailable", li)
	}
}

// unbounded is a Leaser of one id whose store knows no bound for it.
type unbounded struct{ testLease }

func (l *unbounded) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	return l, nil
}
func (l *unbounded) Bound() time.Time { return time.Time{} }

// A lease without a bound (an id never used, or one whose store lost what
// it knew) may be in use by a holder that has not noticed yet: the Gen
// issues nothing before one TTL has passed, Ping says so meanwhile, and
// its first id is after that TTL.
func TestLeaseWithoutBoundWaits(t *testing.T) {
	const ttl = 300 * time.Millisecond
	start := time.Now()
	g, err := snowflake.New(t.Context(), snowflake.Twitter, snowflake.Options{Leaser: &unbounded{}, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Ping(t.Context()); !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("Ping while waiting for the TTL: %v; want ErrUnavailable", err)
	}
	short, cancel := context.WithTimeout(t.Context(), ttl/10)
	defer cancel()
	if _, err := g.Next(short, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next with a deadline shorter than the wait: %v; want DeadlineExceeded", err)
	}
	id, err := g.Next(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := snowflake.Twitter.Decompose(id)
	if !d.Time.After(start.Add(ttl - time.Millisecond)) {
		t.Errorf("the first id is at %v, %v after New; want at least the TTL, %v", d.Time, d.Time.Sub(start), ttl)
	}
	if err := g.Ping(t.Context()); err != nil {
		t.Errorf("Ping once issuing: %v", err)
	}
}
