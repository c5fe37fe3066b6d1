package sequence

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/sequence/record"

	"context"
	"sync"
	"time"
)

// Expirer is implemented by a [Gen] or [Allocator] whose store can forget
// keys. After Expire(ctx, key, ttl) returns nil, the store may delete key,
// and what it keeps for it, once ttl has passed. A key deleted starts
// again at 1 in a store that keeps no journal of it; one that keeps a
// journal keeps its head, and refuses to start the key again (an error
// wrapping journal.ErrBehind), since its numbers would be issued twice. A
// later Expire of the key sets a new ttl. sn calls it for the
// counters of periods of an hour or shorter (reset=hour, minute, second),
// which would otherwise pile up in the store, when the store keeps records
// (package record): it expires keys by the clock of its records
// (record.Store.Now), and sn guards against drawing from a deleted key by
// that clock, keeping the latest reading of it in those records. A
// wrapper whose store cannot expire keys returns an error wrapping
// errors.ErrUnsupported.
type Expirer interface {
	Expire(ctx context.Context, key string, ttl time.Duration) error
}

// Remember records value under name in the store g draws from, unless it
// has a value for name, and returns the value recorded: value itself, or
// the one recorded first. Two processes that record at once get the same
// answer, and records are kept for good: they are facts about the series
// a store serves that every process sharing it must agree on, such as
// the place of a store among the Gens of a [Balanced] or the check value
// of an obfuscation key.
//
// It records in the records of g's store (package record), under "r/"
// and name; for a Gen that draws from others (a method Unwrap() []Gen,
// see [Walk]) and keeps no records itself, in those of the one it draws
// from, or, for one over many stores ([Balanced]), in each of them, under
// a name that says which ("Gen 1 of 2: NAME"), returning the first value
// recorded that is not value. A name is 1 to 255 bytes, a value at most
// 4,096. It returns an error wrapping errors.ErrUnsupported when no store
// keeps records.
func Remember(ctx context.Context, g any, name, value string) (string, error) {
	if len(name) == 0 || len(name) > 255 || len(value) > 4096 {
		return "", fmt.Errorf("sequence: record %.40q: a name of %d bytes (1 to 255) and a value of %d (at most 4096): %w", name, len(name), len(value), ErrInvalidArgument)
	}
	s := record.Of(g)
	if s == nil {
		return rememberIn(ctx, g, name, value)
	}
	got := value
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		r, err := tx.Get1("r/" + name)
		if err != nil {
			return err
		}
		if got = value; r.Exists() {
			got = string(r.Value)
		} else {
			tx.Put("r/"+name, []byte(value))
		}
		return nil
	})
	return got, err
}

// rememberIn records in the stores of the Gens g draws from.
func rememberIn(ctx context.Context, g any, name, value string) (string, error) {
	w, ok := g.(interface{ Unwrap() []Gen })
	if !ok {
		return "", fmt.Errorf("sequence: record %.40q: %T keeps no records: %w", name, g, errors.ErrUnsupported)
	}
	gens := w.Unwrap()
	if len(gens) == 1 {
		return Remember(ctx, gens[0], name, value)
	}
	got, any := value, false
	for i, in := range gens {
		v, err := Remember(ctx, in, fmt.Sprintf("Gen %d of %d: %s", i, len(gens), name), value)
		if errors.Is(err, errors.ErrUnsupported) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("sequence: record %.40q on Gen %d of %d: %w", name, i, len(gens), err)
		}
		any = true
		if v != value && got == value {
			got = v
		}
	}
	if !any {
		return "", fmt.Errorf("sequence: record %.40q: none of the %d Gens %T draws from keeps records: %w", name, len(gens), g, errors.ErrUnsupported)
	}
	return got, nil
}

// expiries keeps the deadlines of the keys of an in-memory store.
type expiries struct {
	mu       sync.Mutex
	deadline map[string]time.Time
	next     time.Time // the earliest deadline, or zero
}

// set gives key a deadline ttl from now.
func (e *expiries) set(now time.Time, key string, ttl time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deadline == nil {
		e.deadline = make(map[string]time.Time)
	}
	d := now.Add(ttl)
	e.deadline[key] = d
	if e.next.IsZero() || d.Before(e.next) {
		e.next = d
	}
}

// sweep calls drop for every key past its deadline at now and forgets it.
func (e *expiries) sweep(now time.Time, drop func(key string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.next.IsZero() || now.Before(e.next) {
		return
	}
	e.next = time.Time{}
	for k, d := range e.deadline {
		if !now.Before(d) {
			drop(k)
			delete(e.deadline, k)
			continue
		}
		if e.next.IsZero() || d.Before(e.next) {
			e.next = d
		}
	}
}
