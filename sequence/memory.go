package sequence

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Memory is a [Gen] that keeps its counters in process memory. Numbers start
// at 1 for each key (see [StartAt]) and are lost when the process ends, so
// Memory suits tests, examples and numbers that only need to be unique within
// one run. It is safe for concurrent use and implements [Batcher], [Binder],
// [Floorer], [Marker], [Expirer], [Clock], [Recorder] and [Catalog].
type Memory struct {
	start    int64
	invalid  error    // of an option given a value it cannot use: every call returns it
	counters sync.Map // key -> *atomic.Int64 holding the last number issued
	exp      expiries
	recs     records
	cat      catalog
}

// MemoryOption configures a [Memory].
type MemoryOption func(*Memory)

// StartAt makes the first number of every key n instead of 1. n must be at
// least 1: with a smaller n, every call of the Memory returns an error
// wrapping [ErrInvalidArgument], as a constructor's bad argument does
// (NewMemory has no error to return it with).
func StartAt(n int64) MemoryOption {
	return func(m *Memory) {
		if n < 1 {
			m.invalid = fmt.Errorf("%w: sequence.StartAt(%d): the first number must be at least 1", ErrInvalidArgument, n)
			return
		}
		m.start = n
	}
}

// MemoryClock makes the Memory read the time, for the deadlines of
// [Memory.Expire], from now instead of time.Now: for tests that move the
// clock.
func MemoryClock(now func() time.Time) MemoryOption {
	return func(m *Memory) { m.exp.now = now }
}

// NewMemory returns a Memory whose keys start at 1 unless an option says
// otherwise.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{start: 1}
	for _, o := range opts {
		o(m)
	}
	return m
}

func (m *Memory) counter(key string) *atomic.Int64 {
	if c, ok := m.counters.Load(key); ok {
		return c.(*atomic.Int64)
	}
	c := new(atomic.Int64)
	c.Store(m.start - 1)
	actual, _ := m.counters.LoadOrStore(key, c)
	return actual.(*atomic.Int64)
}

// Next returns the next number for key.
func (m *Memory) Next(ctx context.Context, key string) (int64, error) {
	if m.invalid != nil {
		return 0, m.invalid
	}
	return memoryNext(ctx, m.counter(key))
}

func memoryNext(ctx context.Context, c *atomic.Int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := c.Add(1)
	if n <= 0 { // wrapped past math.MaxInt64
		c.Store(math.MaxInt64)
		return 0, ErrExhausted
	}
	return n, nil
}

// NextN appends n consecutive numbers for key to dst.
func (m *Memory) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN with n=%d", ErrInvalidArgument, n)
	}
	if m.invalid != nil {
		return dst, m.invalid
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	if n == 0 {
		return dst, nil
	}
	c := m.counter(key)
	last := c.Add(int64(n))
	if last <= 0 || last < int64(n) {
		c.Store(math.MaxInt64)
		return dst, ErrExhausted
	}
	for v := last - int64(n) + 1; v <= last; v++ {
		dst = append(dst, v)
	}
	return dst, nil
}

// Bind returns a Handle that issues numbers for key without a map lookup.
func (m *Memory) Bind(key string) Handle { return memoryHandle{m.counter(key), m.invalid} }

type memoryHandle struct {
	c       *atomic.Int64
	invalid error
}

func (h memoryHandle) Next(ctx context.Context) (int64, error) {
	if h.invalid != nil {
		return 0, h.invalid
	}
	return memoryNext(ctx, h.c)
}

// Floor makes every later number for key greater than floor.
func (m *Memory) Floor(ctx context.Context, key string, floor int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if floor < 0 {
		return fmt.Errorf("%w: floor %d is negative", ErrInvalidArgument, floor)
	}
	c := m.counter(key)
	for {
		cur := c.Load()
		if cur >= floor || c.CompareAndSwap(cur, floor) {
			return nil
		}
	}
}

// Mark raises the last number of key to at least v and returns it.
func (m *Memory) Mark(ctx context.Context, key string, v int64) (int64, error) {
	m.exp.sweep(func(k string) { m.counters.Delete(k) })
	if err := m.Floor(ctx, key, v); err != nil {
		return 0, err
	}
	return m.counter(key).Load(), nil
}

// Now returns the time the Memory's deadlines are kept by: time.Now, or
// the clock given with [MemoryClock].
func (m *Memory) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return m.exp.clock(), nil
}

// Record stores value under name unless the Memory has a value for name,
// and returns the value stored (see [Recorder]).
func (m *Memory) Record(ctx context.Context, name, value string) (string, error) {
	return m.recs.record(ctx, name, value)
}

// Expire deletes key once ttl has passed (on a later Mark or Expire; at
// once when ttl <= 0): its numbers then start again at the first. A Handle bound to key keeps the
// old counter.
func (m *Memory) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.exp.sweep(func(k string) { m.counters.Delete(k) })
	if ttl <= 0 {
		m.counters.Delete(key)
		return nil
	}
	m.exp.set(key, ttl)
	return nil
}

// Enroll records e in the Memory's catalog (see [Catalog]).
func (m *Memory) Enroll(ctx context.Context, e Entry, check func([]Entry) error) (Entry, error) {
	return m.cat.enroll(ctx, e, m.exp.clock(), check)
}

// Entries returns the Memory's catalog (see [Catalog]).
func (m *Memory) Entries(ctx context.Context) ([]Entry, error) { return m.cat.entries(ctx) }

// Forget removes an entry of the Memory's catalog (see [Catalog]).
func (m *Memory) Forget(ctx context.Context, id string) (bool, error) { return m.cat.forget(ctx, id) }
