package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sngen/sn/sequence"
)

func TestRunMemory(t *testing.T) {
	Run(t, func(t *testing.T) sequence.Gen { return sequence.NewMemory() })
}

func TestRunMemoryStart(t *testing.T) {
	Run(t, func(t *testing.T) sequence.Gen { return &sequence.Memory{Start: 1 << 50} })
}

func TestRunTestGen(t *testing.T) {
	Run(t, func(t *testing.T) sequence.Gen { return newTestGen("") })
}

func TestRunAllocatorTestAlloc(t *testing.T) {
	RunAllocator(t, func(t *testing.T) sequence.Allocator { return newTestAlloc("") })
}

// TestGenChecks runs every Gen check directly: a correct Gen passes each one,
// and each check catches at least one broken Gen. A check added to genChecks
// without a broken Gen that it catches fails this test.
func TestGenChecks(t *testing.T) {
	tests := []struct {
		check string
		bug   string
		want  string // substring of the error
	}{
		{"Positive", "zero-first", "numbers must be positive"},
		{"Unique", "repeat", "issued twice"},
		{"Unique", "zero-first", "is not positive"},
		{"Keys", "slot", "issued twice"},
		{"Order", "reverse", "must strictly increase"},
		{"Context", "no-ctx", "returned no error"},
		{"Context", "wrong-ctx-err", "does not wrap context.Canceled"},
		{"Batcher", "batch-fresh-dst", "want [-7]"},
		{"Batcher", "batch-short", "want -7 followed by 5 numbers"},
		{"Batcher", "batch-separate", "issued twice"},
		{"Batcher", "batch-negative", "sequence.ErrInvalidArgument"},
		{"Binder", "bind-separate", "issued twice"},
		{"Floorer", "floor-noop", "want a number above the floor"},
		{"Floorer", "floor-lowers", "a lower floor must not lower the counter"},
		{"Closer", "close-ignored", "after Close returned no error"},
	}
	caught := make(map[string]bool)
	for _, tt := range tests {
		caught[tt.check] = true
		t.Run(tt.check+"/"+tt.bug, func(t *testing.T) {
			c := findCheck(t, genChecks, tt.check)
			// The sizes of Run, then of RunPerNumber: both catch it.
			for _, per := range []int{0, perWorker / 8} {
				ks := newKeyspace(t)
				ks.perWorker = per
				err := c.check(t.Context(), newTestGen(tt.bug), ks)
				if err == nil {
					t.Fatalf("check %s (%d calls a worker) passed a Gen with bug %q", tt.check, ks.calls(), tt.bug)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("check %s (%d calls a worker) on bug %q: error %q does not contain %q", tt.check, ks.calls(), tt.bug, err, tt.want)
				}
			}
		})
	}
	for _, c := range genChecks {
		if !caught[c.name] {
			t.Errorf("check %s has no broken Gen in this table that it catches", c.name)
		}
		t.Run(c.name+"/correct", func(t *testing.T) {
			for _, g := range []sequence.Gen{newTestGen(""), sequence.NewMemory()} {
				if c.needs != nil && !c.needs(powersOf(g)) {
					continue
				}
				if err := c.check(t.Context(), g, newKeyspace(t)); err != nil {
					t.Errorf("check %s failed a correct %T: %v", c.name, g, err)
				}
			}
		})
	}
}

// TestAllocChecks is TestGenChecks for Allocator checks.
func TestAllocChecks(t *testing.T) {
	tests := []struct {
		check string
		bug   string
		want  string
	}{
		{"Range", "short", "of length"},
		{"Range", "zero-first", "numbers must be positive"},
		{"Disjoint", "overlap", "is in"},
		{"Keys", "slot", "is in"},
		{"Order", "descending", "must increase within a goroutine"},
		{"InvalidN", "invalid-plain", "does not wrap sequence.ErrInvalidArgument"},
		{"InvalidN", "invalid-accepted", "returned no error"},
		{"Context", "no-ctx", "returned no error"},
		{"Floorer", "floor-noop", "want a range above the floor"},
		{"Floorer", "floor-lowers", "a lower floor must not lower the counter"},
		{"Returner", "return-any", "want false, nil"},
		{"Returner", "return-none", "want true, nil"},
		{"Closer", "close-ignored", "after Close returned no error"},
	}
	caught := make(map[string]bool)
	for _, tt := range tests {
		caught[tt.check] = true
		t.Run(tt.check+"/"+tt.bug, func(t *testing.T) {
			c := findCheck(t, allocChecks, tt.check)
			err := c.check(t.Context(), newTestAlloc(tt.bug), newKeyspace(t))
			if err == nil {
				t.Fatalf("check %s passed an Allocator with bug %q", tt.check, tt.bug)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check %s on bug %q: error %q does not contain %q", tt.check, tt.bug, err, tt.want)
			}
		})
	}
	for _, c := range allocChecks {
		if !caught[c.name] {
			t.Errorf("check %s has no broken Allocator in this table that it catches", c.name)
		}
		t.Run(c.name+"/correct", func(t *testing.T) {
			if err := c.check(t.Context(), newTestAlloc(""), newKeyspace(t)); err != nil {
				t.Errorf("check %s failed a correct Allocator: %v", c.name, err)
			}
		})
	}
}

// TestFloorUnsupported: a Gen or Allocator whose Floor reports
// errors.ErrUnsupported is recorded as not supporting floors, not failed.
func TestFloorUnsupported(t *testing.T) {
	var u unsupported
	err := findCheck(t, genChecks, "Floorer").check(t.Context(), newTestGen("floor-unsupported"), newKeyspace(t))
	if !errors.As(err, &u) {
		t.Errorf("Gen check Floorer = %v; want unsupported", err)
	}
	err = findCheck(t, allocChecks, "Floorer").check(t.Context(), newTestAlloc("floor-unsupported"), newKeyspace(t))
	if !errors.As(err, &u) {
		t.Errorf("Allocator check Floorer = %v; want unsupported", err)
	}
}

// TestRepeatMessage pins the wording a failing implementer sees.
func TestRepeatMessage(t *testing.T) {
	err := errors.Join(uniqueIssues("k:1", []issue{{n: 5, worker: 0, call: 3}, {n: 6, worker: 1, call: 0}, {n: 5, worker: 2, call: 9}})...)
	want := `key "k:1": number 5 issued twice (worker 0 call 3, then worker 2 call 9)`
	if err == nil || err.Error() != want {
		t.Errorf("uniqueIssues = %v; want %s", err, want)
	}
	err = disjoint("k", []grant{{r: sequence.Range{First: 10, Last: 20}, worker: 1, call: 2}, {r: sequence.Range{First: 1, Last: 10}, worker: 0, call: 7}})
	want = `key "k": number 10 is in [1, 10] (worker 0 call 7) and in [10, 20] (worker 1 call 2)`
	if err == nil || err.Error() != want {
		t.Errorf("disjoint = %v; want %s", err, want)
	}
}

func findCheck[T any](t *testing.T, checks []check[T], name string) check[T] {
	t.Helper()
	for _, c := range checks {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no check named %s", name)
	return check[T]{}
}

// testGen is a Gen with every optional interface; bug names one deliberate
// defect ("" for none).
type testGen struct {
	bug    string
	closed atomic.Bool

	mu       sync.Mutex
	counters map[string]*slot
}

type slot struct {
	owner string
	c     atomic.Int64
}

func newTestGen(bug string) *testGen { return &testGen{bug: bug, counters: make(map[string]*slot)} }

// counter returns key's counter. With bug "slot" it keys its table by the
// first 8 bytes only and resets a slot that another key lands in.
func (g *testGen) counter(key string) *atomic.Int64 {
	id := key
	if g.bug == "slot" {
		id = key[:min(len(key), 8)]
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.counters[id]
	if s == nil || s.owner != key {
		s = &slot{owner: key}
		g.counters[id] = s
	}
	return &s.c
}

func (g *testGen) check(ctx context.Context) error {
	if g.closed.Load() && g.bug != "close-ignored" {
		return fmt.Errorf("testgen: %w", sequence.ErrClosed)
	}
	switch g.bug {
	case "no-ctx":
		return nil
	case "wrong-ctx-err":
		if ctx.Err() != nil {
			return errors.New("testgen: done")
		}
	}
	return ctx.Err()
}

// issue turns the raw counter value n into the number handed out.
func (g *testGen) issue(n int64) int64 {
	switch g.bug {
	case "zero-first":
		return n - 1
	case "repeat":
		return n - n/500
	case "reverse":
		return (n-1)/10*10 + 10 - (n-1)%10
	case "unordered": // unique, above any floor, each pair descending
		if n%2 == 1 {
			return 2*n + 2
		}
		return 2*n - 1
	}
	return n
}

func (g *testGen) next(ctx context.Context, c *atomic.Int64) (int64, error) {
	if err := g.check(ctx); err != nil {
		return 0, err
	}
	return g.issue(c.Add(1)), nil
}

func (g *testGen) Next(ctx context.Context, key string) (int64, error) {
	return g.next(ctx, g.counter(key))
}

func (g *testGen) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 && g.bug != "batch-negative" {
		return dst, fmt.Errorf("testgen: %w: n=%d", sequence.ErrInvalidArgument, n)
	}
	if err := g.check(ctx); err != nil {
		return dst, err
	}
	c := g.counter(key)
	switch g.bug {
	case "batch-fresh-dst":
		dst = nil
	case "batch-short":
		n--
	case "batch-separate":
		c = new(atomic.Int64)
	}
	for range n {
		dst = append(dst, g.issue(c.Add(1)))
	}
	return dst, nil
}

type testHandle struct {
	g *testGen
	c *atomic.Int64
}

func (h testHandle) Next(ctx context.Context) (int64, error) { return h.g.next(ctx, h.c) }

func (g *testGen) Bind(key string) sequence.Handle {
	if g.bug == "bind-separate" {
		return testHandle{g, new(atomic.Int64)}
	}
	return testHandle{g, g.counter(key)}
}

func (g *testGen) Floor(ctx context.Context, key string, floor int64) error {
	if err := g.check(ctx); err != nil {
		return err
	}
	if floor < 0 {
		return fmt.Errorf("testgen: %w: floor %d", sequence.ErrInvalidArgument, floor)
	}
	c := g.counter(key)
	switch g.bug {
	case "floor-unsupported":
		return fmt.Errorf("testgen: %w", errors.ErrUnsupported)
	case "floor-noop":
		return nil
	case "floor-lowers":
		c.Store(floor)
		return nil
	}
	for {
		cur := c.Load()
		if cur >= floor || c.CompareAndSwap(cur, floor) {
			return nil
		}
	}
}

func (g *testGen) Close() error {
	if g.closed.Swap(true) {
		return fmt.Errorf("testgen: %w", sequence.ErrClosed)
	}
	return nil
}

// testAlloc is an Allocator with Floorer and io.Closer; bug names one
// deliberate defect ("" for none).
type testAlloc struct {
	bug    string
	mu     sync.Mutex
	last   map[string]int64 // by slot id; see testGen.counter
	floors map[string]int64 // by slot id: the highest floor raised
	owner  map[string]string
	closed bool
}

func newTestAlloc(bug string) *testAlloc {
	return &testAlloc{bug: bug, last: make(map[string]int64), owner: make(map[string]string)}
}

// id returns the table id of key, resetting the slot like testGen does.
func (a *testAlloc) id(key string) string {
	id := key
	if a.bug == "slot" {
		id = key[:min(len(key), 8)]
	}
	if a.owner[id] != key {
		a.owner[id] = key
		delete(a.last, id)
	}
	return id
}

func (a *testAlloc) check(ctx context.Context) error {
	if a.closed && a.bug != "close-ignored" {
		return fmt.Errorf("testalloc: %w", sequence.ErrClosed)
	}
	if a.bug == "no-ctx" {
		return nil
	}
	return ctx.Err()
}

func (a *testAlloc) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.check(ctx); err != nil {
		return sequence.Range{}, err
	}
	if n <= 0 {
		switch a.bug {
		case "invalid-plain":
			return sequence.Range{}, errors.New("testalloc: bad n")
		case "invalid-accepted":
			n = 1
		default:
			return sequence.Range{}, fmt.Errorf("testalloc: %w: n=%d", sequence.ErrInvalidArgument, n)
		}
	}
	id := a.id(key)
	last := a.last[id]
	switch a.bug {
	case "short":
		a.last[id] = last + n
		return sequence.Range{First: last + 1, Last: last + n - 1}, nil
	case "zero-first":
		a.last[id] = last + n
		return sequence.Range{First: last, Last: last + n - 1}, nil
	case "overlap":
		a.last[id] = last + n - 1
	case "descending":
		if last == 0 {
			last = 1 << 40
		}
		a.last[id] = last - n
		return sequence.Range{First: last - n + 1, Last: last}, nil
	default:
		a.last[id] = last + n
	}
	return sequence.Range{First: last + 1, Last: last + n}, nil
}

func (a *testAlloc) Floor(ctx context.Context, key string, floor int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.check(ctx); err != nil {
		return err
	}
	if floor < 0 {
		return fmt.Errorf("testalloc: %w: floor %d", sequence.ErrInvalidArgument, floor)
	}
	id := a.id(key)
	switch a.bug {
	case "floor-unsupported":
		return fmt.Errorf("testalloc: %w", errors.ErrUnsupported)
	case "floor-noop":
	case "floor-lowers":
		a.last[id] = floor
	default:
		a.last[id] = max(a.last[id], floor)
	}
	if a.floors == nil {
		a.floors = map[string]int64{}
	}
	a.floors[id] = max(a.floors[id], floor)
	return nil
}

// Return lowers the mark from r.Last to r.First-1 when it is r.Last:
// return-any lowers it whatever the mark, return-none never does.
func (a *testAlloc) Return(ctx context.Context, key string, r sequence.Range) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.check(ctx); err != nil {
		return false, err
	}
	if r.First < 1 || r.Len() == 0 {
		return false, fmt.Errorf("testalloc: %w: return %v", sequence.ErrInvalidArgument, r)
	}
	id := a.id(key)
	switch {
	case a.bug == "return-none":
		return false, nil
	case a.bug == "return-any", a.last[id] == r.Last && a.floors[id] < r.First:
		a.last[id] = r.First - 1
		return true, nil
	}
	return false, nil
}

func (a *testAlloc) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("testalloc: %w", sequence.ErrClosed)
	}
	a.closed = true
	return nil
}

// TestGenChecksUnordered: under RunUnordered every check still catches the
// broken Gens that break a promise other than order, and a Gen whose
// numbers are unique but not increasing passes.
func TestGenChecksUnordered(t *testing.T) {
	tests := []struct{ check, bug, want string }{
		{"Positive", "zero-first", "numbers must be positive"},
		{"Unique", "repeat", "issued twice"},
		{"Keys", "slot", "issued twice"},
		{"Context", "no-ctx", "returned no error"},
		{"Batcher", "batch-separate", "issued twice"},
		{"Binder", "bind-separate", "issued twice"},
		{"Floorer", "floor-noop", "want a number above the floor"},
		{"Floorer", "floor-lowers", "issued before: a lower floor must not lower the counter"},
		{"Closer", "close-ignored", "after Close returned no error"},
	}
	unordered := func(t *testing.T) keyspace {
		ks := newKeyspace(t)
		ks.unordered = true
		return ks
	}
	for _, tt := range tests {
		t.Run(tt.check+"/"+tt.bug, func(t *testing.T) {
			err := findCheck(t, genChecks, tt.check).check(t.Context(), newTestGen(tt.bug), unordered(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check %s on bug %q under RunUnordered: error %v, want one containing %q", tt.check, tt.bug, err, tt.want)
			}
		})
	}
	t.Run("unordered", func(t *testing.T) {
		for _, c := range genChecks {
			g := newTestGen("unordered")
			if c.needs != nil && !c.needs(powersOf(g)) {
				continue
			}
			err := c.check(t.Context(), g, unordered(t))
			var u unsupported
			if err != nil && !(c.name == "Order" && errors.As(err, &u)) {
				t.Errorf("check %s under RunUnordered failed a Gen whose numbers are unique but not increasing: %v", c.name, err)
			}
		}
	})
	RunUnordered(t, func(t *testing.T) sequence.Gen { return newTestGen("unordered") })
}
