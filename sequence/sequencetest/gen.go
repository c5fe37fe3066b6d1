package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sngen/sn/sequence"
)

// genChecks lists the promises Run checks, in order. Every entry must have a
// broken Gen in sequencetest_test.go that it catches.
var genChecks = []check[sequence.Gen]{
	{name: "Positive", check: checkPositive},
	{name: "Unique", check: checkUnique},
	{name: "Keys", check: checkKeys},
	{name: "Order", check: checkOrder},
	{name: "Context", check: checkContext},
	{name: "Batcher", needs: func(p powers) bool { return p.batch != nil }, check: checkBatcher},
	{name: "Binder", needs: func(p powers) bool { return p.bind != nil }, check: checkBinder},
	{name: "Floorer", needs: func(p powers) bool { return p.floor != nil }, check: checkFloorer},
	{name: "Closer", needs: func(p powers) bool { return p.close != nil }, check: checkCloser},
}

// drive runs workers goroutines that each make calls calls of call, records
// every number under its key, and then checks that each key's numbers are
// unique and positive and, if ordered, strictly increase within a goroutine.
func drive(workers, calls int, ordered bool, call func(w, i int) (key string, nums []int64, err error)) error {
	l := newLedger()
	err := parallel(workers, func(w int) error {
		mine := make(map[string][]issue)
		var errs []error
		for i := range calls {
			key, nums, err := call(w, i)
			for _, n := range nums {
				mine[key] = append(mine[key], issue{n: n, worker: w, call: i})
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("worker %d call %d (key %q): %w", w, i, key, err))
				break
			}
		}
		for k, nums := range mine {
			if ordered {
				errs = append(errs, increasing(k, nums))
			}
			l.add(k, nums)
		}
		return errors.Join(errs...)
	})
	return errors.Join(err, l.verify())
}

func one(key string, n int64, err error) (string, []int64, error) {
	if err != nil {
		return key, nil, err
	}
	return key, []int64{n}, nil
}

// checkPositive: every number is at least 1, including for the empty key.
func checkPositive(ctx context.Context, g sequence.Gen, ks keyspace) error {
	for _, key := range []string{ks.key("positive"), ""} {
		for i := range 200 {
			n, err := g.Next(ctx, key)
			if err != nil {
				return fmt.Errorf("Next(%q) call %d: %w", key, i, err)
			}
			if n < 1 {
				return fmt.Errorf("Next(%q) call %d returned %d; numbers must be positive", key, i, n)
			}
		}
	}
	return nil
}

// checkUnique: concurrent callers of one key never get the same number.
func checkUnique(ctx context.Context, g sequence.Gen, ks keyspace) error {
	key := ks.key("unique")
	return drive(workers, ks.calls(), false, func(w, i int) (string, []int64, error) {
		n, err := g.Next(ctx, key)
		return one(key, n, err)
	})
}

// checkKeys: keys that are easy to confuse each get unique numbers.
func checkKeys(ctx context.Context, g sequence.Gen, ks keyspace) error {
	keys := ks.tricky()
	return drive(4, 100*len(keys), !ks.unordered, func(w, i int) (string, []int64, error) {
		key := keys[(w+i)%len(keys)]
		n, err := g.Next(ctx, key)
		return one(key, n, err)
	})
}

// checkOrder: one goroutine's numbers for one key strictly increase.
func checkOrder(ctx context.Context, g sequence.Gen, ks keyspace) error {
	if ks.unordered {
		return unsupported{"Order (RunUnordered)"}
	}
	key := ks.key("order")
	return drive(4, ks.calls(), true, func(w, i int) (string, []int64, error) {
		n, err := g.Next(ctx, key)
		return one(key, n, err)
	})
}

// checkContext: a call with a cancelled context fails with
// context.Canceled or, when it is served from memory, returns its number,
// unique and in order; Floor, which waits for the store, fails; and a
// cancelled call does not break the Gen for later calls.
func checkContext(ctx context.Context, g sequence.Gen, ks keyspace) error {
	done, cancel := context.WithCancel(ctx)
	cancel()
	warm, cold := ks.key("warm"), ks.key("cold")
	first, err := g.Next(ctx, warm)
	if err != nil {
		return fmt.Errorf("Next(%q): %w", warm, err)
	}
	var h sequence.Handle
	if b := powersOf(g).bind; b != nil {
		h = b.Bind(warm)
		if _, err := h.Next(ctx); err != nil {
			return fmt.Errorf("Handle(%q).Next: %w", warm, err)
		}
	}
	last := first // the largest number of warm, to check the order
	seen := map[int64]bool{first: true}
	var errs []error
	got := func(what string, ns []int64, err error) {
		if err != nil {
			errs = append(errs, isCanceled(what, err))
			return
		}
		for _, n := range ns {
			if seen[n] || n <= last && !ks.unordered {
				errs = append(errs, fmt.Errorf("%s with a cancelled context returned %d, after %d: numbers must be unique and increase", what, n, last))
			}
			seen[n], last = true, max(last, n)
		}
	}
	n, err := g.Next(done, warm)
	got(fmt.Sprintf("Next(%q) on a warm key", warm), []int64{n}, err)
	_, errCold := g.Next(done, cold)
	errs = append(errs, canceledOr(fmt.Sprintf("Next(%q) on a cold key", cold), errCold))
	if h != nil {
		n, err := h.Next(done)
		got(fmt.Sprintf("Handle(%q).Next", warm), []int64{n}, err)
	}
	if b := powersOf(g).batch; b != nil {
		ns, err := b.NextN(done, warm, nil, 3)
		got(fmt.Sprintf("NextN(%q, 3)", warm), ns, err)
	}
	if f := powersOf(g).floor; f != nil {
		err := f.Floor(done, ks.key("floor"), 10)
		errs = append(errs, isCanceled("Floor", err))
	}
	after, err := g.Next(ctx, warm)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("Next(%q) after calls with a cancelled context: %w", warm, err))
	case (after <= last || seen[after]) && !ks.unordered:
		errs = append(errs, fmt.Errorf("key %q: Next returned %d after %d: numbers for one key must strictly increase within a goroutine", warm, after, last))
	}
	return errors.Join(errs...)
}

// checkBatcher: NextN appends n numbers, unique together with Next's.
func checkBatcher(ctx context.Context, g sequence.Gen, ks keyspace) error {
	b := powersOf(g).batch
	key := ks.key("batch")

	got, err := b.NextN(ctx, key, []int64{-7}, 0)
	if err != nil {
		return fmt.Errorf("NextN(%q, n=0): %w", key, err)
	}
	if len(got) != 1 || got[0] != -7 {
		return fmt.Errorf("NextN(%q, dst=[-7], n=0) = %v; want [-7]", key, got)
	}
	got, err = b.NextN(ctx, key, []int64{-7}, -1)
	if err := isInvalid(fmt.Sprintf("NextN(%q, n=-1)", key), err); err != nil {
		return err
	}
	if len(got) != 1 || got[0] != -7 {
		return fmt.Errorf("NextN(%q, dst=[-7], n=-1) = %v; want dst unchanged", key, got)
	}
	got, err = b.NextN(ctx, key, []int64{-7}, 5)
	if err != nil {
		return fmt.Errorf("NextN(%q, n=5): %w", key, err)
	}
	if len(got) != 6 || got[0] != -7 {
		return fmt.Errorf("NextN(%q, dst=[-7], n=5) = %v; want -7 followed by 5 numbers", key, got)
	}
	for i := 2; i < len(got) && !ks.unordered; i++ {
		if got[i] <= got[i-1] {
			return fmt.Errorf("key %q: NextN(n=5) returned %v: numbers for one key must strictly increase within a goroutine", key, got[1:])
		}
	}
	batch := got[1:]

	return drive(4, 400, !ks.unordered, func(w, i int) (string, []int64, error) {
		if w == 0 && i == 0 {
			return key, batch, nil // the numbers from the single call above
		}
		if i%3 == 0 {
			n, err := g.Next(ctx, key)
			return one(key, n, err)
		}
		n := 1 + (w*7+i)%17
		start := (w + i) % 3 // a dst that already holds numbers
		dst := make([]int64, start, start+n)
		for j := range dst {
			dst[j] = -1
		}
		got, err := b.NextN(ctx, key, dst, n)
		if len(got) < start {
			return key, nil, fmt.Errorf("NextN(n=%d) returned %d elements for a dst of %d: it must append", n, len(got), start)
		}
		nums := got[start:]
		if err == nil && len(nums) != n {
			return key, nums, fmt.Errorf("NextN(n=%d) appended %d numbers", n, len(nums))
		}
		return key, nums, err
	})
}

// checkBinder: Handles and Next share one counter per key.
func checkBinder(ctx context.Context, g sequence.Gen, ks keyspace) error {
	b := powersOf(g).bind
	key, other := ks.key("bind"), ks.key("bind-other")
	shared := b.Bind(key)
	otherH := b.Bind(other)
	handles := make([]sequence.Handle, 4)
	for w := range handles {
		handles[w] = b.Bind(key)
	}
	return drive(len(handles), ks.calls()/2, !ks.unordered, func(w, i int) (string, []int64, error) {
		var n int64
		var err error
		switch i % 4 {
		case 0:
			n, err = g.Next(ctx, key)
		case 1:
			n, err = shared.Next(ctx)
		case 2:
			n, err = handles[w].Next(ctx)
		case 3:
			n, err = otherH.Next(ctx)
			return one(other, n, err)
		}
		return one(key, n, err)
	})
}

// checkFloorer: a floor raises a key; a lower floor never lowers it.
func checkFloorer(ctx context.Context, g sequence.Gen, ks keyspace) error {
	f := powersOf(g).floor
	key := ks.key("floor")
	var high int64
	seen := make(map[int64]bool)
	next := func(what string) (int64, error) {
		n, err := g.Next(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("%s: Next(%q): %w", what, key, err)
		}
		if seen[n] {
			return 0, fmt.Errorf("key %q: Next returned %d %s, and it was issued before: a lower floor must not lower the counter", key, n, what)
		}
		seen[n] = true
		high = max(high, n)
		return n, nil
	}
	for range 10 {
		if _, err := next("before Floor"); err != nil {
			return err
		}
	}

	floor := high + 10_000
	if err := f.Floor(ctx, key, floor); errors.Is(err, errors.ErrUnsupported) {
		return unsupported{what: fmt.Sprintf("Floor (%v)", err)}
	} else if err != nil {
		return fmt.Errorf("Floor(%q, %d): %w", key, floor, err)
	}
	n, err := next("after Floor")
	if err != nil {
		return err
	}
	if n <= floor {
		return fmt.Errorf("key %q: Next returned %d after Floor(%d); want a number above the floor", key, n, floor)
	}
	if b := powersOf(g).batch; b != nil {
		got, err := b.NextN(ctx, key, nil, 3)
		if err != nil {
			return fmt.Errorf("NextN(%q, 3) after Floor: %w", key, err)
		}
		for _, n := range got {
			if n <= floor {
				return fmt.Errorf("key %q: NextN returned %v after Floor(%d); want numbers above the floor", key, got, floor)
			}
			high = max(high, n)
		}
	}
	if b := powersOf(g).bind; b != nil {
		n, err := b.Bind(key).Next(ctx)
		if err != nil {
			return fmt.Errorf("Handle(%q).Next after Floor: %w", key, err)
		}
		if n <= floor {
			return fmt.Errorf("key %q: Handle.Next returned %d after Floor(%d); want a number above the floor", key, n, floor)
		}
		high = max(high, n)
	}

	for _, low := range []int64{0, 1, floor} {
		if err := f.Floor(ctx, key, low); err != nil {
			return fmt.Errorf("Floor(%q, %d) below the numbers issued: %w; want a no-op", key, low, err)
		}
		before := high
		n, err := next("after a lower Floor")
		if err != nil {
			return err
		}
		if n <= before && !ks.unordered {
			return fmt.Errorf("key %q: Next returned %d after Floor(%d), but %d was already issued: a lower floor must not lower the counter", key, n, low, before)
		}
	}

	fresh := ks.key("floor-fresh")
	const freshFloor = 1 << 40
	if err := f.Floor(ctx, fresh, freshFloor); err != nil {
		return fmt.Errorf("Floor(%q, %d) on an unused key: %w", fresh, int64(freshFloor), err)
	}
	if n, err := g.Next(ctx, fresh); err != nil {
		return fmt.Errorf("Next(%q) after Floor: %w", fresh, err)
	} else if n <= freshFloor {
		return fmt.Errorf("key %q: Next returned %d after Floor(%d) on an unused key; want a number above the floor", fresh, n, int64(freshFloor))
	}

	if err := isInvalid(fmt.Sprintf("Floor(%q, -1)", key), f.Floor(ctx, key, -1)); err != nil {
		return err
	}
	return checkFloorConcurrent(ctx, g, f, ks.key("floor-concurrent"), !ks.unordered)
}

// checkFloorConcurrent raises a floor while other goroutines call Next: a
// call that starts after Floor has returned must get a number above it.
func checkFloorConcurrent(ctx context.Context, g sequence.Gen, f sequence.Floorer, key string, ordered bool) error {
	const floor = 1 << 41
	var floored atomic.Bool
	return drive(4, 1000, ordered, func(w, i int) (string, []int64, error) {
		if w == 0 && i == 300 {
			if err := f.Floor(ctx, key, floor); err != nil {
				return key, nil, fmt.Errorf("Floor(%d) during concurrent Next calls: %w", int64(floor), err)
			}
			floored.Store(true)
		}
		after := floored.Load()
		n, err := g.Next(ctx, key)
		if err == nil && after && n <= floor {
			return key, []int64{n}, fmt.Errorf("Next returned %d after Floor(%d) had returned", n, int64(floor))
		}
		return one(key, n, err)
	})
}

// checkCloser: Close returns nil and every later call fails with ErrClosed.
func checkCloser(ctx context.Context, g sequence.Gen, ks keyspace) error {
	c := powersOf(g).close
	key := ks.key("close")
	if _, err := g.Next(ctx, key); err != nil {
		return fmt.Errorf("Next(%q) before Close: %w", key, err)
	}
	var h sequence.Handle
	if b := powersOf(g).bind; b != nil {
		h = b.Bind(key)
		if _, err := h.Next(ctx); err != nil {
			return fmt.Errorf("Handle(%q).Next before Close: %w", key, err)
		}
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	_, err := g.Next(ctx, key)
	errs := []error{isClosed(fmt.Sprintf("Next(%q)", key), err)}
	_, err = g.Next(ctx, ks.key("close-cold"))
	errs = append(errs, isClosed("Next on an unused key", err))
	if h != nil {
		_, err := h.Next(ctx)
		errs = append(errs, isClosed(fmt.Sprintf("Handle(%q).Next", key), err))
	}
	if b := powersOf(g).batch; b != nil {
		_, err := b.NextN(ctx, key, nil, 2)
		errs = append(errs, isClosed(fmt.Sprintf("NextN(%q, 2)", key), err))
	}
	if f := powersOf(g).floor; f != nil {
		errs = append(errs, isClosed("Floor", f.Floor(ctx, key, 1<<42)))
	}
	return errors.Join(errs...)
}
