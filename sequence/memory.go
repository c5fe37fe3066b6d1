package sequence

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// Memory is a [Gen] that keeps its counters in process memory. Numbers start
// at 1 for each key (see Start) and are lost when the process ends, so
// Memory suits tests, examples and numbers that only need to be unique within
// one run. It is safe for concurrent use and implements [Batcher], [Binder],
// [Floorer], [Expirer] and [record.Holder] (its catalog and named records:
// see package catalog and [Remember]; its clock is the process's).
//
// The zero Memory is ready to use; its fields, the options, must not
// change once it is:
//
//	legacy := &sequence.Memory{Start: 500001}
type Memory struct {
	// Start is the first number of every key; 0 means 1. With a negative
	// Start every call returns an error wrapping [ErrInvalidArgument], as
	// a constructor's bad argument does.
	Start int64
	// Clock is the time of [Memory.Expire]'s deadlines and of its
	// records (record.Store.Now); nil means time.Now. Tests that move the
	// clock set it.
	Clock func() time.Time

	counters sync.Map // key -> *atomic.Int64 holding the last number issued
	exp      expiries
	kv       record.Memory
}

// NewMemory returns a Memory whose keys start at 1: new(Memory).
func NewMemory() *Memory { return new(Memory) }

// invalid returns the error of every call when an option cannot be used.
func (m *Memory) invalid() error {
	if m.Start < 0 {
		return fmt.Errorf("%w: sequence.Memory{Start: %d}: the first number must be at least 1", ErrInvalidArgument, m.Start)
	}
	return nil
}

// clock returns the Memory's time.
func (m *Memory) clock() time.Time {
	if m.Clock != nil {
		return m.Clock()
	}
	return time.Now()
}

func (m *Memory) counter(key string) *atomic.Int64 {
	if c, ok := m.counters.Load(key); ok {
		return c.(*atomic.Int64)
	}
	c := new(atomic.Int64)
	c.Store(max(m.Start, 1) - 1)
	actual, _ := m.counters.LoadOrStore(key, c)
	return actual.(*atomic.Int64)
}

// Next returns the next number for key.
func (m *Memory) Next(ctx context.Context, key string) (int64, error) {
	if err := m.invalid(); err != nil {
		return 0, err
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
	if err := m.invalid(); err != nil {
		return dst, err
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
func (m *Memory) Bind(key string) Handle { return memoryHandle{m.counter(key), m.invalid()} }

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

// Expire deletes key once ttl has passed (on a later Mark or Expire; at
// once when ttl <= 0): its numbers then start again at the first. A Handle bound to key keeps the
// old counter.
func (m *Memory) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.exp.sweep(m.clock(), func(k string) { m.counters.Delete(k) })
	if ttl <= 0 {
		m.counters.Delete(key)
		return nil
	}
	m.exp.set(m.clock(), key, ttl)
	return nil
}

// Records returns the Memory's records (see package record), where its
// catalog is kept.
func (m *Memory) Records() record.Store { return memoryRecords{&m.kv, m.clock} }

// memoryRecords are a Memory's records, timed by its Clock.
type memoryRecords struct {
	*record.Memory
	clock func() time.Time
}

func (r memoryRecords) Now(ctx context.Context) (time.Time, error) { return r.clock(), ctx.Err() }
