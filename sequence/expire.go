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
// and what it keeps for it, once ttl has passed; a key deleted starts again
// at 1. A later Expire of the key sets a new ttl. sn calls it for the
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

// Recorder is implemented by a [Gen] or [Allocator] whose store keeps
// records: facts about the series it serves that every process sharing
// the store must agree on, such as the place of a store among the Gens of
// a [Balanced] or the check value of an obfuscation key. Record stores
// value under name unless the store has a value for name already, and
// returns the value stored: value itself, or the one recorded first. Two
// processes that record at once get the same answer. Records are kept for
// good. A wrapper whose store keeps no records returns an error wrapping
// errors.ErrUnsupported.
//
// A store keeps them in its records (package record), and [Remember]
// records there: only a Gen over many stores ([Balanced]), or a wrapper
// of one ([Queued]), is a Recorder itself.
type Recorder interface {
	Record(ctx context.Context, name, value string) (string, error)
}

// Remember records value under name in the store g draws from, unless it
// has a value for name, and returns the value recorded (see [Recorder]):
// through g's Record method if it has one, or else in the records of its
// store (see package record), under "r/" and name. A name is 1 to 255
// bytes, a value at most 4,096. It returns an error wrapping
// errors.ErrUnsupported when g keeps no records.
func Remember(ctx context.Context, g any, name, value string) (string, error) {
	if r, ok := g.(Recorder); ok {
		return r.Record(ctx, name, value)
	}
	if len(name) == 0 || len(name) > 255 || len(value) > 4096 {
		return "", fmt.Errorf("sequence: record %.40q: a name of %d bytes (1 to 255) and a value of %d (at most 4096): %w", name, len(name), len(value), ErrInvalidArgument)
	}
	s := record.Of(g)
	if s == nil {
		return "", fmt.Errorf("sequence: record %.40q: %T keeps no records: %w", name, g, errors.ErrUnsupported)
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
