// Package sequencetest is a conformance suite for implementations of
// [sequence.Gen] and [sequence.Allocator], in the manner of testing/slogtest.
//
// A backend calls [Run] (for a Gen) or [RunAllocator] (for an Allocator) from
// one of its own tests, passing a constructor that returns a fresh value:
//
//	func TestConformance(t *testing.T) {
//		sequencetest.Run(t, func(t *testing.T) sequence.Gen {
//			return mybackend.New(...)
//		})
//	}
//
// The suite runs one named subtest per promise of package sequence (Positive,
// Unique, Keys, Order, Context, and, when the value implements them, Batcher,
// Binder, Floorer and io.Closer). Each subtest calls the constructor once and
// uses keys that begin with the subtest's name and a random suffix, so a
// store-backed value may share its store across subtests and test runs. The
// suite never assumes that a key starts at 1. The one exception to the prefix
// rule is the empty key "", which the Positive, Keys and Range subtests also
// use; they only check that the numbers they see are positive and unique, so
// a shared store is fine there too. A backend must therefore accept "" as a
// key (bbolt, for one, does not, so such a backend has to encode its keys).
//
// If a value implements io.Closer, the suite closes it when the subtest ends
// (with t.Cleanup); a Close error other than [sequence.ErrClosed] fails the
// test. The constructor may register its own cleanups with the t it is given.
package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
)

// Sizes of the concurrent workloads. They are large enough to expose a racy
// counter under -race and small enough for a store that takes a round trip
// per block.
const (
	workers   = 8
	perWorker = 2000
)

// check is one promise of a Gen or an Allocator (T), checked on a fresh
// value.
type check[T any] struct {
	name  string
	needs func(powers) bool // nil: every value
	check func(ctx context.Context, v T, ks keyspace) error
}

// powers are the optional interfaces of the sequence package that a Gen
// or an Allocator under test implements, found in one place: the checks
// ask for them here rather than asserting each where it is used.
type powers struct {
	batch sequence.Batcher
	bind  sequence.Binder
	floor sequence.Floorer
	ret   sequence.Returner
	close io.Closer
}

// powersOf returns the optional interfaces v implements.
func powersOf(v any) powers {
	var p powers
	p.batch, _ = v.(sequence.Batcher)
	p.bind, _ = v.(sequence.Binder)
	p.floor, _ = v.(sequence.Floorer)
	p.ret, _ = v.(sequence.Returner)
	p.close, _ = v.(io.Closer)
	return p
}

// run runs checks on values from newV, each on a fresh one, skipping the
// checks of optional interfaces that a first value does not implement.
func run[T any](t *testing.T, what string, newV func(t *testing.T) T, checks []check[T], m keyspace) {
	t.Helper()
	fresh := func(t *testing.T) T {
		t.Helper()
		v := newV(t)
		if any(v) == nil {
			t.Fatalf("sequencetest: %s returned nil", what)
		}
		closeAtCleanup(t, v)
		return v
	}
	probe := fresh(t)
	for _, c := range checks {
		if c.needs != nil && !c.needs(powersOf(probe)) {
			t.Logf("sequencetest: %T does not implement %s; not checked", probe, c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Helper()
			v := fresh(t)
			ks := newKeyspace(t)
			ks.unordered, ks.perWorker = m.unordered, m.perWorker
			report(t, v, c.check(t.Context(), v, ks))
		})
	}
	if catalog.Of(probe) != nil {
		t.Run("Catalog", func(t *testing.T) { RunCatalog(t, catalog.Of(fresh(t))) })
	}
}

// Run checks that the Gens returned by newGen keep the promises of
// [sequence.Gen] and of every optional interface they implement:
//
//   - Positive: every number is at least 1.
//   - Unique: 8 goroutines calling Next on one key never get the same
//     number twice.
//   - Keys: keys that are easy to confuse (the empty key, "a:b", "a\x00b", a
//     long key, a UTF-8 key) each get unique numbers while used together.
//   - Order: the numbers one goroutine gets for one key strictly increase.
//   - Context: a call consults its context when it may wait (for a store,
//     a lock, the network): with a cancelled context, Floor returns an
//     error for which errors.Is(err, context.Canceled) holds, and so does
//     any call that returns an error; a call that takes a number from
//     memory (a warm key's Next, a Handle's, NextN) may return it instead,
//     unique and in order like any other. A cancelled call never breaks
//     the Gen.
//   - Batcher: NextN appends exactly n numbers to dst, unique together with
//     Next's and increasing within a goroutine; n == 0 appends nothing; a
//     negative n returns an error wrapping [sequence.ErrInvalidArgument].
//   - Binder: numbers from Handles and from Next for the same key are unique
//     together and increase within a goroutine.
//   - Floorer: after Floor(key, f) every number is above f; a lower floor
//     never lowers the counter; a negative floor is ErrInvalidArgument. A
//     Gen whose first Floor returns an error wrapping errors.ErrUnsupported
//     is reported as not supporting floors.
//   - Closer: Close returns nil and later calls return an error wrapping
//     [sequence.ErrClosed].
//   - Catalog: the promises of a [catalog.Catalog] (see [RunCatalog]).
//
// newGen is called once to learn which optional interfaces the Gen has and
// then once per subtest. Run reports failures with t.Error and never stops
// the calling test early.
func Run(t *testing.T, newGen func(t *testing.T) sequence.Gen) {
	t.Helper()
	run(t, "newGen", newGen, genChecks, keyspace{})
}

// RunPerNumber is [Run] for a Gen that takes a round trip to its store
// for every number, such as a gapless counter that commits each in a
// transaction: the store serializes the calls, so the concurrent
// workloads that look for a racy counter are an eighth as large (2,000
// numbers for Unique, not 16,000). Every check of Run applies.
func RunPerNumber(t *testing.T, newGen func(t *testing.T) sequence.Gen) {
	t.Helper()
	run(t, "newGen", newGen, genChecks, keyspace{perWorker: perWorker / 8})
}

// RunUnordered is [Run] for a Gen that promises unique numbers but not
// increasing ones, such as [sequence.Balanced], whose numbers come from
// several counters in turn. Every check of Run applies except Order, and
// no other check requires one goroutine's numbers to increase.
func RunUnordered(t *testing.T, newGen func(t *testing.T) sequence.Gen) {
	t.Helper()
	run(t, "newGen", newGen, genChecks, keyspace{unordered: true})
}

// RunAllocator checks that the Allocators returned by newAlloc keep the
// promises of [sequence.Allocator] and of the optional interfaces they
// implement:
//
//   - Range: Allocate(key, n) returns a Range of Len n with First >= 1.
//   - Disjoint: ranges returned to 8 concurrent goroutines for one key never
//     share a number.
//   - Keys: keys that are easy to confuse each get disjoint ranges while used
//     together.
//   - Order: successive ranges one goroutine gets for one key increase: each
//     First is above the previous Last.
//   - InvalidN: n <= 0 returns an error wrapping [sequence.ErrInvalidArgument].
//   - Context: a cancelled context returns an error wrapping context.Canceled.
//   - Floorer: after Floor(key, f) the next range starts above f; a lower floor
//     is a no-op; a negative floor is ErrInvalidArgument. ErrUnsupported is
//     treated as for Run.
//   - Closer: Close returns nil and later calls return an error wrapping
//     [sequence.ErrClosed].
//   - Returner: Return takes back the top of the last range reserved, which
//     the next Allocate gives again, and nothing else.
//   - Catalog: the promises of a [catalog.Catalog] (see [RunCatalog]).
//
// newAlloc is called once to learn which optional interfaces the Allocator
// has and then once per subtest.
func RunAllocator(t *testing.T, newAlloc func(t *testing.T) sequence.Allocator) {
	t.Helper()
	run(t, "newAlloc", newAlloc, allocChecks, keyspace{})
}

// unsupported is returned by a check when the value declines the capability
// at run time by returning an error wrapping errors.ErrUnsupported (a Segment
// over an Allocator that cannot Floor, say).
type unsupported struct{ what string }

func (u unsupported) Error() string { return u.what + " is not supported" }

// report fails t with err, except that it only logs an unsupported.
func report(t *testing.T, v any, err error) {
	t.Helper()
	var u unsupported
	switch {
	case err == nil:
	case errors.As(err, &u):
		t.Logf("sequencetest: %T: %v; not checked", v, err)
	default:
		t.Errorf("%T: %v", v, err)
	}
}

// closeAtCleanup closes v at the end of t if it is an io.Closer. Closing
// twice is allowed to return ErrClosed (the Closer subtest closes first).
func closeAtCleanup(t *testing.T, v any) {
	t.Helper()
	c, ok := v.(io.Closer)
	if !ok {
		return
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil && !errors.Is(err, sequence.ErrClosed) {
			t.Errorf("sequencetest: %T.Close: %v", v, err)
		}
	})
}

// keyspace makes key names private to one subtest of one run.
type keyspace struct {
	prefix    string
	unordered bool // see RunUnordered
	perWorker int  // calls of each worker in the large workloads; 0: the const perWorker (see RunPerNumber)
}

// calls returns how many calls each worker of a large workload makes.
func (ks keyspace) calls() int {
	if ks.perWorker > 0 {
		return ks.perWorker
	}
	return perWorker
}

func newKeyspace(t *testing.T) keyspace {
	return keyspace{prefix: fmt.Sprintf("%s#%016x/", t.Name(), rand.Uint64())}
}

func (ks keyspace) key(name string) string { return ks.prefix + name }

// tricky returns keys that a careless implementation might confuse with
// each other: the empty key, separators, a NUL byte, a long key, UTF-8.
func (ks keyspace) tricky() []string {
	return []string{
		ks.key("a"),
		ks.key("b"),
		"",
		ks.key(""),
		ks.key("a:b"),
		ks.key("a\x00b"),
		ks.key("a b"),
		ks.key(strings.Repeat("long-key/", 120)),
		ks.key("заказ-订单-番号-🧾"),
	}
}

// issue records one number and who got it, for error messages.
type issue struct {
	n            int64
	worker, call int
}

// ledger collects numbers per key from many goroutines and finds repeats.
type ledger struct {
	mu   sync.Mutex
	keys map[string][]issue
}

func newLedger() *ledger { return &ledger{keys: make(map[string][]issue)} }

func (l *ledger) add(key string, nums []issue) {
	l.mu.Lock()
	l.keys[key] = append(l.keys[key], nums...)
	l.mu.Unlock()
}

// verify returns an error naming the first few repeated or non-positive
// numbers, or nil.
func (l *ledger) verify() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	keys := make([]string, 0, len(l.keys))
	for k := range l.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		errs = append(errs, uniqueIssues(k, l.keys[k])...)
		if len(errs) >= 5 {
			break
		}
	}
	return errors.Join(errs...)
}

// uniqueIssues checks that every number in nums is positive and appears once.
// It reports at most 5 problems.
func uniqueIssues(key string, nums []issue) []error {
	var errs []error
	seen := make(map[int64]issue, len(nums))
	for _, is := range nums {
		if len(errs) >= 5 {
			break
		}
		if is.n < 1 {
			errs = append(errs, fmt.Errorf("key %q: number %d is not positive (worker %d, call %d)", key, is.n, is.worker, is.call))
			continue
		}
		if first, dup := seen[is.n]; dup {
			errs = append(errs, fmt.Errorf("key %q: number %d issued twice (worker %d call %d, then worker %d call %d)",
				key, is.n, first.worker, first.call, is.worker, is.call))
			continue
		}
		seen[is.n] = is
	}
	return errs
}

// increasing checks that nums, one goroutine's numbers for one key in the
// order it got them, strictly increase.
func increasing(key string, nums []issue) error {
	for i := 1; i < len(nums); i++ {
		if nums[i].n <= nums[i-1].n {
			return fmt.Errorf("key %q: worker %d got %d at call %d after %d at call %d: numbers for one key must strictly increase within a goroutine",
				key, nums[i].worker, nums[i].n, nums[i].call, nums[i-1].n, nums[i-1].call)
		}
	}
	return nil
}

// parallel runs f(w) for w in [0, n) on n goroutines and joins their errors.
func parallel(n int, f func(w int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(w)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// isCanceled checks that err reports a cancelled context.
// canceledOr checks a call with a cancelled context that may have been
// served from memory: no error, or one wrapping context.Canceled.
func canceledOr(what string, err error) error {
	if err == nil {
		return nil
	}
	return isCanceled(what, err)
}

func isCanceled(what string, err error) error {
	if err == nil {
		return fmt.Errorf("%s with a cancelled context returned no error", what)
	}
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s with a cancelled context returned %q, which does not wrap context.Canceled", what, err)
	}
	return nil
}

// isInvalid checks that err wraps ErrInvalidArgument.
func isInvalid(what string, err error) error {
	if err == nil {
		return fmt.Errorf("%s returned no error; want one wrapping sequence.ErrInvalidArgument", what)
	}
	if !errors.Is(err, sequence.ErrInvalidArgument) {
		return fmt.Errorf("%s returned %q, which does not wrap sequence.ErrInvalidArgument", what, err)
	}
	return nil
}

// isClosed checks that err wraps ErrClosed.
func isClosed(what string, err error) error {
	if err == nil {
		return fmt.Errorf("%s after Close returned no error; want one wrapping sequence.ErrClosed", what)
	}
	if !errors.Is(err, sequence.ErrClosed) {
		return fmt.Errorf("%s after Close returned %q, which does not wrap sequence.ErrClosed", what, err)
	}
	return nil
}
