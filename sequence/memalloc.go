package sequence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// MemoryAllocator is an [Allocator] that keeps its counters in process
// memory. The first [Range] of every key starts at 1. Like [Memory], it
// forgets everything when the process ends, so it suits tests, examples and
// putting a [Segment] in front of nothing durable. It is safe for concurrent
// use and implements [Floorer], [Expirer], [record.Holder], [Returner],
// [journal.Holder], and has an identity ([MemoryAllocator.StoreID]): each
// MemoryAllocator is a store of its own.
type MemoryAllocator struct {
	id     string
	mu     sync.Mutex
	last   map[string]int64 // key -> last number reserved
	floors map[string]int64 // key -> the highest floor raised (see Return)
	exp    expiries
	kv     record.Memory
}

// NewMemoryAllocator returns an empty MemoryAllocator.
func NewMemoryAllocator() *MemoryAllocator {
	a := &MemoryAllocator{id: fmt.Sprintf("memory %016x", rand.Uint64()), last: make(map[string]int64)}
	return a
}

// StoreID returns "memory" and a random number drawn by
// [NewMemoryAllocator]: no two MemoryAllocators share it.
func (a *MemoryAllocator) StoreID(context.Context) (string, error) { return a.id, nil }

// Allocate reserves the n numbers after the last one reserved for key. It
// returns an error wrapping [ErrInvalidArgument] if n < 1 and one wrapping
// [ErrExhausted] if fewer than n numbers are left below math.MaxInt64.
func (a *MemoryAllocator) Allocate(ctx context.Context, key string, n int64) (Range, error) {
	if err := ctx.Err(); err != nil {
		return Range{}, err
	}
	if n < 1 {
		return Range{}, fmt.Errorf("%w: Allocate(%q) with n=%d, want n >= 1", ErrInvalidArgument, key, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	last := a.last[key]
	if n > math.MaxInt64-last {
		return Range{}, fmt.Errorf("%w: key %q has %d numbers left, Allocate asked for %d", ErrExhausted, key, math.MaxInt64-last, n)
	}
	r := Range{First: last + 1, Last: last + n}
	if err := a.noted(ctx, key, last, r.Last, journal.Event{Kind: journal.AllocateKind(ctx), Range: r}); err != nil {
		return Range{}, err
	}
	a.last[key] = r.Last
	return r, nil
}

// Floor makes every later Range for key start above floor. A floor at or
// below the last number reserved is a no-op.
func (a *MemoryAllocator) Floor(ctx context.Context, key string, floor int64) error {
	return a.floor(ctx, key, floor, true)
}

func (a *MemoryAllocator) floor(ctx context.Context, key string, floor int64, noted bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if floor < 0 {
		return fmt.Errorf("%w: Floor(%q, %d): the floor is negative", ErrInvalidArgument, key, floor)
	}
	a.sweep()
	a.mu.Lock()
	defer a.mu.Unlock()
	if last := a.last[key]; floor > last {
		if noted {
			if err := a.noted(ctx, key, last, floor, journal.Event{Kind: journal.Floored, Range: Range{First: last + 1, Last: floor}}); err != nil {
				return err
			}
		}
		a.last[key] = floor
	}
	if a.floors == nil {
		a.floors = map[string]int64{}
	}
	a.floors[key] = max(a.floors[key], floor)
	return nil
}

// Expire deletes key once ttl has passed (on a later Mark, Floor or
// Expire; at once when ttl <= 0).
func (a *MemoryAllocator) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ttl <= 0 {
		a.mu.Lock()
		delete(a.last, key)
		a.mu.Unlock()
	} else {
		a.exp.set(time.Now(), key, ttl) // before the sweep, which must not delete a key given more time
	}
	a.sweep()
	return nil
}

func (a *MemoryAllocator) sweep() {
	a.exp.sweep(time.Now(), func(k string) {
		a.mu.Lock()
		delete(a.last, k)
		a.mu.Unlock()
	})
}

// Records returns the MemoryAllocator's records (see package record),
// where its catalog is kept.
func (a *MemoryAllocator) Records() record.Store { return &a.kv }

// Return lowers key's last number reserved from r.Last to r.First-1 when
// it is r.Last still and no floor at or above r.First was raised (see
// [Returner]).
func (a *MemoryAllocator) Return(ctx context.Context, key string, r Range) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if r.First < 1 || r.Len() == 0 {
		return false, fmt.Errorf("%w: Return(%q, %v): an empty range", ErrInvalidArgument, key, r)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last[key] != r.Last || a.floors[key] >= r.First {
		return false, nil
	}
	if err := a.noted(ctx, key, r.Last, r.First-1, journal.Event{Kind: journal.Returned, Range: r}); errors.Is(err, journal.ErrVoid) {
		return false, nil // a number of r was voided: it stays used
	} else if err != nil {
		return false, err
	}
	a.last[key] = r.First - 1
	return true, nil
}

// Journal returns the journals kept in the MemoryAllocator's records (a
// [journal.Holder]).
func (a *MemoryAllocator) Journal() journal.Keeper { return memoryJournal{journal.InRecords(&a.kv), a} }

// memoryJournal is a MemoryAllocator's journals, noted in turn with its
// changes, as a store's transactions take turns.
type memoryJournal struct {
	journal.Keeper
	a *MemoryAllocator
}

func (j memoryJournal) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	j.a.mu.Lock()
	defer j.a.mu.Unlock()
	return j.Keeper.Note(ctx, key, e)
}

// noted appends es to key's journal in the records, for a change of the
// key's mark from before to mark: what a durable store does in the
// transaction that moves the counter. a.mu is held.
func (a *MemoryAllocator) noted(ctx context.Context, key string, before, mark int64, es ...journal.Event) error {
	// Past the caller's check of ctx, a change is made whole: a context
	// done in between does not leave a reservation unrecorded, or a
	// caller in doubt of one it was never given.
	return record.Update(context.WithoutCancel(ctx), &a.kv, func(tx *record.Tx) error {
		_, err := journal.Append(tx, key, before, mark, es...)
		return err
	})
}
