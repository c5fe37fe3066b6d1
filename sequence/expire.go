package sequence

import (
	"context"
	"sync"
	"time"
)

// Expirer is implemented by a [Gen] or [Allocator] whose store can forget
// keys. After Expire(ctx, key, ttl) returns nil, the store may delete key,
// and what it keeps for it, once ttl has passed; a key deleted starts again
// at 1. A later Expire of the key sets a new ttl. sn calls it for the
// counters of periods of an hour or shorter (reset=hour, minute, second),
// which would otherwise pile up in the store, and guards against drawing
// from a deleted key with a [Marker]. A wrapper whose store cannot expire
// keys returns an error wrapping errors.ErrUnsupported.
type Expirer interface {
	Expire(ctx context.Context, key string, ttl time.Duration) error
}

// Marker is implemented by a [Gen] or [Allocator] that keeps high-water
// marks in its store. Mark raises the mark of key to at least v and
// returns the mark, read from the store at the time of the call (never
// from a cache): the largest v any process has marked. Marks share the
// keys of counters: the mark of a key is its counter's last number, and a
// key used for marks must not be drawn from. sn keeps the latest instant
// numbers were issued at as a mark, so that a process whose clock went
// back into a period whose counter has expired refuses to draw instead of
// starting the counter again. A wrapper whose store cannot keep marks
// returns an error wrapping errors.ErrUnsupported.
type Marker interface {
	Mark(ctx context.Context, key string, v int64) (int64, error)
}

// expiries keeps the deadlines of the keys of an in-memory store.
type expiries struct {
	mu       sync.Mutex
	now      func() time.Time
	deadline map[string]time.Time
	next     time.Time // the earliest deadline, or zero
}

// set gives key a deadline ttl from now.
func (e *expiries) set(key string, ttl time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deadline == nil {
		e.deadline = make(map[string]time.Time)
	}
	d := e.clock().Add(ttl)
	e.deadline[key] = d
	if e.next.IsZero() || d.Before(e.next) {
		e.next = d
	}
}

func (e *expiries) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// sweep calls drop for every key past its deadline and forgets it.
func (e *expiries) sweep(drop func(key string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock()
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
