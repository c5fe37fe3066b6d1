package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/sngen/sn/sequence"
)

// allocChecks lists the promises RunAllocator checks, in order. Every entry
// must have a broken Allocator in sequencetest_test.go that it catches.
var allocChecks = []check[sequence.Allocator]{
	{name: "Range", check: checkRange},
	{name: "Disjoint", check: checkDisjoint},
	{name: "Keys", check: checkAllocKeys},
	{name: "Order", check: checkAllocOrder},
	{name: "InvalidN", check: checkInvalidN},
	{name: "Context", check: checkAllocContext},
	{name: "Floorer", needs: func(p powers) bool { return p.floor != nil }, check: checkAllocFloorer},
	{name: "Returner", needs: func(p powers) bool { return p.ret != nil }, check: checkReturner},
	{name: "Closer", needs: func(p powers) bool { return p.close != nil }, check: checkAllocCloser},
}

// checkReturner checks that Return takes back the last range reserved,
// and only that: a range below it, one another Allocate followed, or one a
// floor was raised into stays reserved.
func checkReturner(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	ret := powersOf(a).ret
	key := ks.key("return")
	r1, err := a.Allocate(ctx, key, 10)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 10): %w", key, err)
	}
	r2, err := a.Allocate(ctx, key, 10)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 10): %w", key, err)
	}
	if ok, err := ret.Return(ctx, key, r1); errors.Is(err, errors.ErrUnsupported) {
		return unsupported{what: fmt.Sprintf("Return (%v)", err)}
	} else if err != nil || ok {
		return fmt.Errorf("Return(%q, %v) with %v reserved after it = %v, %v; want false, nil", key, r1, r2, ok, err)
	}
	part := sequence.Range{First: r2.First + 4, Last: r2.Last}
	if ok, err := ret.Return(ctx, key, part); err != nil || !ok {
		return fmt.Errorf("Return(%q, %v), the top of the last range %v = %v, %v; want true, nil", key, part, r2, ok, err)
	}
	r3, err := a.Allocate(ctx, key, part.Len())
	if err != nil {
		return fmt.Errorf("Allocate(%q, %d) after Return: %w", key, part.Len(), err)
	}
	if r3 != part {
		return fmt.Errorf("key %q: Allocate after Return(%v) = %v; want the numbers returned", key, part, r3)
	}
	if _, err := ret.Return(ctx, key, sequence.Range{First: 5, Last: 4}); !errors.Is(err, sequence.ErrInvalidArgument) {
		return fmt.Errorf("Return(%q) of an empty range: %v; want ErrInvalidArgument", key, err)
	}
	r4, err := a.Allocate(ctx, key, 1)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 1): %w", key, err)
	}
	if r4.First <= r3.Last {
		return fmt.Errorf("key %q: Allocate = %v after %v was reserved; want above it", key, r4, r3)
	}
	if ok, err := ret.Return(ctx, key, r3); err != nil || ok {
		return fmt.Errorf("Return(%q, %v) with %v reserved after it = %v, %v; want false, nil", key, r3, r4, ok, err)
	}
	// A floor raised into a range held, at or below the mark, which it
	// does not move, is not undone when the range is returned.
	if fl := powersOf(a).floor; fl != nil {
		r5, err := a.Allocate(ctx, key, 10)
		if err != nil {
			return fmt.Errorf("Allocate(%q, 10): %w", key, err)
		}
		if err := fl.Floor(ctx, key, r5.First+4); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("Floor(%q, %d): %w", key, r5.First+4, err)
		} else if err == nil {
			if ok, err := ret.Return(ctx, key, r5); err != nil || ok {
				return fmt.Errorf("Return(%q, %v) after Floor(%d) = %v, %v; want false, nil: the floor would be undone", key, r5, r5.First+4, ok, err)
			}
		}
	}
	return nil
}

// grant records one range and who got it, for error messages.
type grant struct {
	r            sequence.Range
	worker, call int
}

// validRange checks that r is what Allocate(key, n) may return.
func validRange(key string, n int64, r sequence.Range) error {
	if r.Len() != n {
		return fmt.Errorf("key %q: Allocate(n=%d) returned %v of length %d; want length %d", key, n, r, r.Len(), n)
	}
	if r.First < 1 {
		return fmt.Errorf("key %q: Allocate(n=%d) returned %v; numbers must be positive", key, n, r)
	}
	return nil
}

// disjoint checks that no number is in two of the ranges granted for key.
func disjoint(key string, gs []grant) error {
	sort.Slice(gs, func(i, j int) bool { return gs[i].r.First < gs[j].r.First })
	var errs []error
	for i := 1; i < len(gs) && len(errs) < 5; i++ {
		a, b := gs[i-1], gs[i]
		if b.r.First <= a.r.Last {
			errs = append(errs, fmt.Errorf("key %q: number %d is in %v (worker %d call %d) and in %v (worker %d call %d)",
				key, b.r.First, a.r, a.worker, a.call, b.r, b.worker, b.call))
		}
	}
	return errors.Join(errs...)
}

// driveRanges runs workers goroutines that each make calls calls of call,
// checks every range, checks that each goroutine's ranges for a key increase
// if ordered, and that ranges for one key are disjoint.
func driveRanges(workers, calls int, ordered bool, call func(w, i int) (key string, n int64, r sequence.Range, err error)) error {
	var mu sync.Mutex
	all := make(map[string][]grant)
	err := parallel(workers, func(w int) error {
		mine := make(map[string][]grant)
		var errs []error
		for i := range calls {
			key, n, r, err := call(w, i)
			if err != nil {
				errs = append(errs, fmt.Errorf("worker %d call %d: Allocate(%q, %d): %w", w, i, key, n, err))
				break
			}
			if err := validRange(key, n, r); err != nil {
				errs = append(errs, err)
				break
			}
			if prev := mine[key]; ordered && len(prev) > 0 && r.First <= prev[len(prev)-1].r.Last {
				errs = append(errs, fmt.Errorf("key %q: worker %d got %v at call %d after %v: ranges for one key must increase within a goroutine",
					key, w, r, i, prev[len(prev)-1].r))
			}
			mine[key] = append(mine[key], grant{r: r, worker: w, call: i})
		}
		mu.Lock()
		for k, gs := range mine {
			all[k] = append(all[k], gs...)
		}
		mu.Unlock()
		return errors.Join(errs...)
	})
	errs := []error{err}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		errs = append(errs, disjoint(k, all[k]))
	}
	return errors.Join(errs...)
}

// checkRange: a range has the length asked for and starts at 1 or above.
func checkRange(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	for _, key := range []string{ks.key("range"), ""} {
		for _, n := range []int64{1, 2, 3, 1000, 1} {
			r, err := a.Allocate(ctx, key, n)
			if err != nil {
				return fmt.Errorf("Allocate(%q, %d): %w", key, n, err)
			}
			if err := validRange(key, n, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDisjoint: concurrent ranges for one key never share a number.
func checkDisjoint(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	key := ks.key("disjoint")
	return driveRanges(workers, 200, false, func(w, i int) (string, int64, sequence.Range, error) {
		n := int64(1 + (w*13+i)%50)
		r, err := a.Allocate(ctx, key, n)
		return key, n, r, err
	})
}

// checkAllocKeys: keys that are easy to confuse each get disjoint ranges.
func checkAllocKeys(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	keys := ks.tricky()
	return driveRanges(4, 20*len(keys), true, func(w, i int) (string, int64, sequence.Range, error) {
		key := keys[(w+i)%len(keys)]
		n := int64(1 + (w+i)%7)
		r, err := a.Allocate(ctx, key, n)
		return key, n, r, err
	})
}

// checkAllocOrder: one goroutine's ranges for one key increase.
func checkAllocOrder(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	key := ks.key("order")
	return driveRanges(4, 200, true, func(w, i int) (string, int64, sequence.Range, error) {
		n := int64(1 + i%5)
		r, err := a.Allocate(ctx, key, n)
		return key, n, r, err
	})
}

// checkInvalidN: n <= 0 is ErrInvalidArgument.
func checkInvalidN(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	key := ks.key("invalid")
	var errs []error
	for _, n := range []int64{0, -1, math.MinInt64} {
		_, err := a.Allocate(ctx, key, n)
		errs = append(errs, isInvalid(fmt.Sprintf("Allocate(%q, %d)", key, n), err))
	}
	return errors.Join(errs...)
}

// checkAllocContext: a cancelled context fails with context.Canceled and
// does not break the Allocator.
func checkAllocContext(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	done, cancel := context.WithCancel(ctx)
	cancel()
	key := ks.key("ctx")
	first, err := a.Allocate(ctx, key, 10)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 10): %w", key, err)
	}
	_, err = a.Allocate(done, key, 10)
	errs := []error{isCanceled(fmt.Sprintf("Allocate(%q, 10)", key), err)}
	if f := powersOf(a).floor; f != nil {
		errs = append(errs, isCanceled("Floor", f.Floor(done, key, 1<<40)))
	}
	after, err := a.Allocate(ctx, key, 10)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("Allocate(%q, 10) after a call with a cancelled context: %w", key, err))
	case after.First <= first.Last:
		errs = append(errs, fmt.Errorf("key %q: Allocate returned %v after %v: ranges for one key must increase within a goroutine", key, after, first))
	}
	return errors.Join(errs...)
}

// checkAllocFloorer: a floor raises a key; a lower floor is a no-op.
func checkAllocFloorer(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	f := powersOf(a).floor
	key := ks.key("floor")
	r, err := a.Allocate(ctx, key, 10)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 10): %w", key, err)
	}
	floor := r.Last + 10_000
	if err := f.Floor(ctx, key, floor); errors.Is(err, errors.ErrUnsupported) {
		return unsupported{what: fmt.Sprintf("Floor (%v)", err)}
	} else if err != nil {
		return fmt.Errorf("Floor(%q, %d): %w", key, floor, err)
	}
	r, err = a.Allocate(ctx, key, 10)
	if err != nil {
		return fmt.Errorf("Allocate(%q, 10) after Floor: %w", key, err)
	}
	if r.First <= floor {
		return fmt.Errorf("key %q: Allocate returned %v after Floor(%d); want a range above the floor", key, r, floor)
	}
	for _, low := range []int64{0, 1, floor} {
		if err := f.Floor(ctx, key, low); err != nil {
			return fmt.Errorf("Floor(%q, %d) below the numbers reserved: %w; want a no-op", key, low, err)
		}
		prev := r
		r, err = a.Allocate(ctx, key, 10)
		if err != nil {
			return fmt.Errorf("Allocate(%q, 10) after a lower Floor: %w", key, err)
		}
		if r.First <= prev.Last {
			return fmt.Errorf("key %q: Allocate returned %v after Floor(%d), but %v was already reserved: a lower floor must not lower the counter", key, r, low, prev)
		}
	}
	fresh := ks.key("floor-fresh")
	const freshFloor = 1 << 40
	if err := f.Floor(ctx, fresh, freshFloor); err != nil {
		return fmt.Errorf("Floor(%q, %d) on an unused key: %w", fresh, int64(freshFloor), err)
	}
	if r, err := a.Allocate(ctx, fresh, 1); err != nil {
		return fmt.Errorf("Allocate(%q, 1) after Floor: %w", fresh, err)
	} else if r.First <= freshFloor {
		return fmt.Errorf("key %q: Allocate returned %v after Floor(%d) on an unused key; want a range above the floor", fresh, r, int64(freshFloor))
	}
	return isInvalid(fmt.Sprintf("Floor(%q, -1)", key), f.Floor(ctx, key, -1))
}

// checkAllocCloser: Close returns nil and later calls fail with ErrClosed.
func checkAllocCloser(ctx context.Context, a sequence.Allocator, ks keyspace) error {
	c := powersOf(a).close
	key := ks.key("close")
	if _, err := a.Allocate(ctx, key, 1); err != nil {
		return fmt.Errorf("Allocate(%q, 1) before Close: %w", key, err)
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	_, err := a.Allocate(ctx, key, 1)
	errs := []error{isClosed(fmt.Sprintf("Allocate(%q, 1)", key), err)}
	if f := powersOf(a).floor; f != nil {
		errs = append(errs, isClosed("Floor", f.Floor(ctx, key, 1<<42)))
	}
	return errors.Join(errs...)
}
