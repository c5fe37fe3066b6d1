package sequence_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/sequencetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func mustBalanced(t *testing.T, gens []sequence.Gen, opts sequence.BalancedOptions) *sequence.Balanced {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	b, err := sequence.NewBalanced(gens, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBalancedConformance(t *testing.T) {
	t.Run("segments", func(t *testing.T) {
		sequencetest.RunUnordered(t, func(t *testing.T) sequence.Gen {
			gens := make([]sequence.Gen, 4)
			for i := range gens {
				s := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
				t.Cleanup(func() { s.Close() })
				gens[i] = s
			}
			return mustBalanced(t, gens, sequence.BalancedOptions{})
		})
	})
	t.Run("one store twice", func(t *testing.T) {
		sequencetest.RunUnordered(t, func(t *testing.T) sequence.Gen {
			m := sequence.NewMemory()
			return mustBalanced(t, []sequence.Gen{m, m}, sequence.BalancedOptions{})
		})
	})
}

// flakyGen fails while fail is set, and can panic, hang or return values
// out of range.
type flakyGen struct {
	sequence.Gen
	fail  atomic.Bool
	mode  string
	calls atomic.Int64
}

var errFlaky = errors.New("flaky: store down")

func (g *flakyGen) Next(ctx context.Context, key string) (int64, error) {
	g.calls.Add(1)
	switch g.mode {
	case "panic":
		panic("flaky: bug in a Gen")
	case "hang":
		<-ctx.Done()
		return 0, ctx.Err()
	case "huge":
		return math.MaxInt64, nil
	case "zero":
		return 0, nil
	}
	if g.fail.Load() {
		return 0, errFlaky
	}
	return g.Gen.Next(ctx, key)
}

// Gens fail and recover at random while 8 goroutines take numbers: every
// call succeeds while one Gen works, no number repeats, and each number's
// low bits name a Gen that was working.
func TestBalancedFailover(t *testing.T) {
	gens := make([]*flakyGen, 4)
	inner := make([]sequence.Gen, 4)
	for i := range gens {
		gens[i] = &flakyGen{Gen: sequence.NewMemory()}
		inner[i] = gens[i]
	}
	clock := newFakeClock()
	b := mustBalanced(t, inner, sequence.BalancedOptions{Rescue: time.Second, Now: clock.Now})
	ctx := context.Background()

	var mu sync.Mutex
	seen := make(map[int64]bool)
	repeats := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var issued atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]int64, 0, 1024)
			for {
				select {
				case <-stop:
					mu.Lock()
					for _, n := range mine {
						if seen[n] {
							repeats++
						}
						seen[n] = true
					}
					mu.Unlock()
					return
				default:
				}
				if w%2 == 0 {
					n, err := b.Next(ctx, "order")
					if err != nil {
						t.Errorf("Next with at least one Gen working: %v", err)
						return
					}
					mine = append(mine, n)
				} else {
					got, err := b.NextN(ctx, "order", nil, 5)
					if err != nil {
						t.Errorf("NextN with at least one Gen working: %v", err)
						return
					}
					mine = append(mine, got...)
				}
				issued.Add(1)
			}
		}()
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		// Gen 0 always works; the others fail and recover at random.
		for _, g := range gens[1:] {
			g.fail.Store(r.IntN(3) == 0)
		}
		clock.Advance(300 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if repeats != 0 {
		t.Errorf("%d numbers repeated in %d", repeats, len(seen))
	}
	used := make(map[int]int)
	for n := range seen {
		i, _ := b.Split(n)
		used[i]++
	}
	for i := range gens {
		if used[i] == 0 {
			t.Errorf("Gen %d issued no number: it was never rescued", i)
		}
	}
	t.Logf("%d numbers from %d calls, by Gen %v, 0 repeats", len(seen), issued.Load(), used)
}

// A Gen that failed is out of the turn until Rescue has passed; then it
// is tried again.
func TestBalancedRescue(t *testing.T) {
	a, c := &flakyGen{Gen: sequence.NewMemory()}, &flakyGen{Gen: sequence.NewMemory()}
	clock := newFakeClock()
	b := mustBalanced(t, []sequence.Gen{a, c}, sequence.BalancedOptions{Rescue: time.Minute, Now: clock.Now})
	ctx := context.Background()
	a.fail.Store(true)
	for range 10 {
		n, err := b.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if i, _ := b.Split(n); i != 1 {
			t.Fatalf("number %d from Gen %d while Gen 0 fails", n, i)
		}
	}
	if got := a.calls.Load(); got != 1 {
		t.Errorf("a failed Gen was called %d times within Rescue; want once", got)
	}
	a.fail.Store(false)
	clock.Advance(59 * time.Second)
	b.Next(ctx, "k")
	b.Next(ctx, "k")
	if got := a.calls.Load(); got != 1 {
		t.Errorf("a Gen was called %d times before Rescue passed; want once", got)
	}
	clock.Advance(2 * time.Second)
	from := map[int]bool{}
	for range 4 {
		n, err := b.Next(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		i, _ := b.Split(n)
		from[i] = true
	}
	if !from[0] || !from[1] {
		t.Errorf("after Rescue, numbers came from Gens %v; want both", from)
	}
}

// Every Gen failing is ErrUnavailable with each Gen's error; a Gen that
// panics, hangs past Timeout or returns a value out of range fails over.
func TestBalancedFailures(t *testing.T) {
	ctx := context.Background()
	a, c := &flakyGen{Gen: sequence.NewMemory()}, &flakyGen{Gen: sequence.NewMemory()}
	a.fail.Store(true)
	c.fail.Store(true)
	b := mustBalanced(t, []sequence.Gen{a, c}, sequence.BalancedOptions{})
	_, err := b.Next(ctx, "k")
	if !errors.Is(err, sequence.ErrUnavailable) || !errors.Is(err, errFlaky) {
		t.Errorf("every Gen failing: %v; want ErrUnavailable wrapping each Gen's error", err)
	}
	// Both are out of the turn now, and still tried.
	a.fail.Store(false)
	if _, err := b.Next(ctx, "k"); err != nil {
		t.Errorf("a Gen out of the turn that works again is not tried when the others fail: %v", err)
	}

	for _, mode := range []string{"panic", "hang", "huge", "zero"} {
		t.Run(mode, func(t *testing.T) {
			bad := &flakyGen{Gen: sequence.NewMemory(), mode: mode}
			good := sequence.NewMemory()
			b := mustBalanced(t, []sequence.Gen{bad, good}, sequence.BalancedOptions{Timeout: 20 * time.Millisecond})
			for range 4 {
				n, err := b.Next(ctx, "k")
				if err != nil {
					t.Fatalf("a Gen that fails with %q does not fail over: %v", mode, err)
				}
				if i, _ := b.Split(n); i != 1 {
					t.Fatalf("number %d from the Gen that fails with %q", n, mode)
				}
			}
			alone := mustBalanced(t, []sequence.Gen{bad, bad}, sequence.BalancedOptions{Timeout: 20 * time.Millisecond})
			if _, err := alone.Next(ctx, "k"); !errors.Is(err, sequence.ErrUnavailable) {
				t.Errorf("every Gen failing with %q: %v; want ErrUnavailable", mode, err)
			}
		})
	}

	done, cancel := context.WithCancel(ctx)
	hang := &flakyGen{Gen: sequence.NewMemory(), mode: "hang"}
	b = mustBalanced(t, []sequence.Gen{hang, hang}, sequence.BalancedOptions{})
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := b.Next(done, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("the caller's context ended during a call: %v; want context.Canceled", err)
	}
}

func TestNewBalancedRefuses(t *testing.T) {
	m := sequence.NewMemory()
	for _, tt := range []struct {
		gens []sequence.Gen
		opts sequence.BalancedOptions
		want string
	}{
		{nil, sequence.BalancedOptions{}, "with 0 Gens"},
		{[]sequence.Gen{m}, sequence.BalancedOptions{}, "with 1 Gens"},
		{[]sequence.Gen{m, m, m}, sequence.BalancedOptions{}, "want a power of two"},
		{[]sequence.Gen{m, nil}, sequence.BalancedOptions{}, "Gen 1 is nil"},
		{[]sequence.Gen{m, m}, sequence.BalancedOptions{Rescue: -1}, "negative Rescue"},
	} {
		_, err := sequence.NewBalanced(tt.gens, tt.opts)
		if !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("NewBalanced(%d Gens, %+v) = %v; want ErrInvalidArgument saying %q", len(tt.gens), tt.opts, err, tt.want)
		}
	}
	b := mustBalanced(t, []sequence.Gen{m, onlyNext{sequence.NewMemory()}}, sequence.BalancedOptions{})
	if err := b.Floor(context.Background(), "k", 10); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Floor over a Gen that cannot take one: %v; want ErrUnsupported", err)
	}
}

// onlyNext is a Gen with nothing but Next.
type onlyNext struct{ sequence.Gen }

func (g onlyNext) Next(ctx context.Context, key string) (int64, error) { return g.Gen.Next(ctx, key) }

// panicky is a Gen, not a Batcher, whose Next panics at random after
// drawing its value, as a member with a bug would half-way through a batch.
type panicky struct {
	sequence.Gen
	rnd *rand.Rand
	mu  sync.Mutex
}

func (g *panicky) Next(ctx context.Context, key string) (int64, error) {
	v, err := g.Gen.Next(ctx, key)
	g.mu.Lock()
	boom := g.rnd.IntN(4) == 0
	g.mu.Unlock()
	if boom {
		panic("panicky: bug in a Gen")
	}
	return v, err
}

// repeats counts the numbers that appear more than once in batches.
func repeats(batches [][]int64) int {
	seen := make(map[int64]bool)
	n := 0
	for _, b := range batches {
		for _, v := range b {
			if seen[v] {
				n++
			}
			seen[v] = true
		}
	}
	return n
}

// A member that panics half-way through a batch leaves nothing of its raw
// values in the batch: 8 goroutines draw batches from [panicky, Memory]
// and no number repeats. The control shows the count sees raw values that
// reach a batch unshifted.
func TestBalancedNextNMemberPanics(t *testing.T) {
	ctx := context.Background()
	b := mustBalanced(t, []sequence.Gen{
		&panicky{Gen: sequence.NewMemory(), rnd: rand.New(rand.NewPCG(1, 2))},
		sequence.NewMemory(),
	}, sequence.BalancedOptions{Rescue: time.Nanosecond})
	var mu sync.Mutex
	var batches [][]int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, 0, 64) // room, so that a Gen writes into the caller's array
			for range 500 {
				got, err := b.NextN(ctx, "k", buf[:0], 7)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				batches = append(batches, append([]int64(nil), got...))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if r := repeats(batches); r != 0 {
		t.Errorf("%d numbers repeated across %d batches of a Balanced whose member panics", r, len(batches))
	}

	// Control: one member's raw values beside another's numbers repeat.
	raw, m := sequence.NewMemory(), sequence.NewMemory()
	control := mustBalanced(t, []sequence.Gen{m, m}, sequence.BalancedOptions{})
	var leaked [][]int64
	for range 50 {
		v, _ := raw.Next(ctx, "k")
		n, _ := control.Next(ctx, "k")
		leaked = append(leaked, []int64{v, n})
	}
	if repeats(leaked) == 0 {
		t.Error("control: raw values beside a Balanced's numbers did not repeat; the count cannot see a leak")
	}
}

// downStore is a Segment whose store may be down: Next and its records
// fail.
type downStore struct {
	*sequence.Segment
	down atomic.Bool
}

func (d *downStore) Next(ctx context.Context, key string) (int64, error) {
	if d.down.Load() {
		return 0, errFlaky
	}
	return d.Segment.Next(ctx, key)
}

func (d *downStore) Records() record.Store { return downRecords{d.Segment.Records(), &d.down} }

// downRecords are records that fail while down.
type downRecords struct {
	record.Store
	down *atomic.Bool
}

func (r downRecords) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	if r.down.Load() {
		return nil, errFlaky
	}
	return r.Store.Get(ctx, keys...)
}

func (r downRecords) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if r.down.Load() {
		return false, errFlaky
	}
	return r.Store.Commit(ctx, cond, ops)
}

// A Balanced records every Gen's place before its first number: a second
// Balanced with the Gens in another order is refused at its first call,
// even when the first drew one number only, from one Gen (found by an
// adversary: places recorded one by one let the second record the other
// Gen's place first and print the same number). While a store is down at
// the start, nothing is issued (ErrUnavailable), and once it answers the
// Balanced goes on.
func TestBalancedPlacesEveryGenFirst(t *testing.T) {
	ctx := context.Background()
	newStore := func() *downStore {
		s := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
		t.Cleanup(func() { s.Close() })
		return &downStore{Segment: s}
	}
	a, b := newStore(), newStore()
	first := mustBalanced(t, []sequence.Gen{a, b}, sequence.BalancedOptions{})
	n, err := first.Next(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	second := mustBalanced(t, []sequence.Gen{b, a}, sequence.BalancedOptions{})
	if m, err := second.Next(ctx, "k"); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("the Gens in another order, after one number (%d): %d, %v; want ErrInvalidArgument", n, m, err)
	}

	c, d := newStore(), newStore()
	d.down.Store(true)
	third := mustBalanced(t, []sequence.Gen{c, d}, sequence.BalancedOptions{})
	if m, err := third.Next(ctx, "k"); !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("a store down at the start: %d, %v; want ErrUnavailable", m, err)
	}
	d.down.Store(false)
	if _, err := third.Next(ctx, "k"); err != nil {
		t.Fatalf("once its stores answer: %v", err)
	}
	reordered := mustBalanced(t, []sequence.Gen{d, c}, sequence.BalancedOptions{})
	if _, err := reordered.Next(ctx, "k"); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("the other order: %v; want ErrInvalidArgument", err)
	}
	d.down.Store(true) // once placed, a Gen that fails leaves the turn
	for range 4 {
		if _, err := third.Next(ctx, "k"); err != nil {
			t.Fatalf("with one store down after the start: %v", err)
		}
	}
}
