package sequence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Segment is a [Gen] that serves numbers from blocks reserved by an
// [Allocator], so that almost every number costs an atomic add and only one
// call in a block reaches the store.
//
// For each key a Segment holds the current block and at most one block
// fetched ahead (a double buffer). Once [SegmentOptions.Prefetch] of the
// current block is used, the one caller whose number crosses that mark starts
// a fetch of the next block in the background, so in steady state no caller
// waits for the store at a block boundary. There is never more than one
// Allocate call in flight per key: when the current block runs out before the
// next has arrived, every caller waits for that single fetch (or until its
// own context is done), at start-up as well as under bursts.
//
// Numbers for one key come out of one Segment strictly increasing: blocks are
// used in the order they were fetched, and a block is accepted only if it
// starts above every number the Segment has seen for the key. A block that
// does not (the store lost data) is refused and the callers that needed it
// get an error wrapping [ErrRegressed]; no number is ever issued twice.
//
// When the Allocator fails, buffered numbers keep being served. Once they run
// out, callers get an error wrapping both [ErrUnavailable] and the
// Allocator's error. After a failed fetch, the key's next fetch waits for a
// backoff that starts at 50ms and doubles with each consecutive failure up to
// 1s; during the backoff callers that find no buffered number fail at once
// rather than call the store. The first call after the backoff fetches again
// (and waits for it), so service resumes by itself when the store recovers.
//
// Background fetches run with their own context, bounded by
// [SegmentOptions.FetchTimeout], so a caller whose context ends does not
// cancel a fetch others are waiting for. [Segment.Close] cancels them.
//
// The size of the blocks adapts per key to the rate of use; see
// [SegmentOptions.Target]. Numbers buffered in memory are lost (as gaps) when
// the process ends. A Segment keeps a small state for every key it has seen
// until it is closed.
//
// A Segment is safe for concurrent use. It implements [Batcher], [Binder],
// [Floorer] and io.Closer.
type Segment struct {
	alloc Allocator
	opts  SegmentOptions

	keys  sync.Map // string -> *segKey
	nkeys atomic.Int64

	ctx    context.Context // parent of every fetch; cancelled by Close
	cancel context.CancelFunc
	mu     sync.Mutex // orders closing against wg.Add
	closed atomic.Bool
	wg     sync.WaitGroup // background fetches

	fetches, waits, errs, regressions atomic.Int64
}

// SegmentStats are counters of a [Segment] since it was created.
type SegmentStats struct {
	Fetches     int64 // calls to the Allocator, successful or not
	Waits       int64 // times a call waited for a block to arrive
	Errors      int64 // Allocator calls that failed or returned an invalid Range
	Regressions int64 // blocks refused because they were not above every number seen
	Keys        int64 // keys the Segment holds state for
}

// KeyStats describe the state of one key of a [Segment].
type KeyStats struct {
	Step      int64 // size of the next block the Segment will ask for
	Current   Range // the block numbers are issued from; empty before the first
	Issued    int64 // how many numbers of Current are taken
	Next      Range // the block fetched ahead; empty if none
	Fetching  bool  // whether a fetch is in flight
	LastError error // error of the last failed fetch; nil after a success
}

// Retry backoff after a failed fetch; see the Segment doc comment.
const (
	retryMin = 50 * time.Millisecond
	retryMax = time.Second
)

// NewSegment returns a Segment that reserves blocks from a. Zero or invalid
// fields of opts take the defaults documented on [SegmentOptions]. The
// Segment starts no goroutine until it is used; call [Segment.Close] to stop
// its background fetches.
func NewSegment(a Allocator, opts SegmentOptions) *Segment {
	if a == nil {
		panic("sequence: NewSegment with a nil Allocator")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Segment{alloc: a, opts: opts.withDefaults(), ctx: ctx, cancel: cancel}
}

// block is a reserved range [first, first+size-1]. used counts the numbers
// taken: the caller whose add returns i (1-based) owns first+i-1 if i <= size.
// used only grows, and past size it means the block is spent.
type block struct {
	first     int64
	size      int64
	threshold int64    // the add that reaches this count starts the next fetch
	_         [40]byte // keeps the fields above, read by every caller, off used's cache line
	used      atomic.Int64
	_         [56]byte
}

// spent is the block of a key that has none: every add misses it.
var spent = &block{}

// fetch is one Allocate call in flight for a key.
type fetch struct {
	done  chan struct{} // closed once err is set and the block is placed
	err   error
	n     int64
	epoch uint64 // segKey.epoch when the fetch started
}

// segKey is a Segment's state for one key. It is also the key's Handle.
type segKey struct {
	s   *Segment
	key string
	cur atomic.Pointer[block]

	mu        sync.Mutex
	next      *block    // the block fetched ahead, or nil
	inflight  *fetch    // the fetch in flight, or nil
	high      int64     // last number of the newest block accepted, or the floor if higher
	epoch     uint64    // raised by Floor when it raises high
	step      int64     // size of the next block to fetch
	lastFetch time.Time // when the last fetch started
	failures  int       // consecutive failed fetches
	lastErr   error     // error of the last failed fetch
	retryAt   time.Time // callers do not fetch before this time after a failure
}

func (s *Segment) state(key string) *segKey {
	if v, ok := s.keys.Load(key); ok {
		return v.(*segKey)
	}
	k := &segKey{s: s, key: key, step: s.opts.Step}
	k.cur.Store(spent)
	v, loaded := s.keys.LoadOrStore(key, k)
	if !loaded {
		s.nkeys.Add(1)
	}
	return v.(*segKey)
}

// Next returns the next number for key. It waits for the store only when the
// key has no buffered number, which in steady state happens only for a key's
// first call.
func (s *Segment) Next(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	v, ok := s.keys.Load(key)
	if !ok {
		return s.state(key).Next(ctx)
	}
	// The hot path, as in segKey.Next.
	k := v.(*segKey)
	b := k.cur.Load()
	i := b.used.Add(1)
	if i <= b.size && i != b.threshold {
		return b.first + i - 1, nil
	}
	return k.takeSlow(ctx, b, i)
}

// Bind returns a Handle for key that skips the key lookup of [Segment.Next].
// A Handle is safe for concurrent use and shares its counter with Next.
func (s *Segment) Bind(key string) Handle { return s.state(key) }

// Next returns the next number for the Handle's key. This is the hot path:
// a pointer load, one atomic add on the current block and a compare.
func (k *segKey) Next(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b := k.cur.Load()
	i := b.used.Add(1)
	if i <= b.size && i != b.threshold {
		return b.first + i - 1, nil
	}
	return k.takeSlow(ctx, b, i)
}

// takeSlow finishes a take whose add i on block b crossed the prefetch
// threshold or missed the block.
func (k *segKey) takeSlow(ctx context.Context, b *block, i int64) (int64, error) {
	for {
		if i <= b.size {
			if i == b.threshold {
				k.prefetch()
			}
			return b.first + i - 1, nil
		}
		if err := k.refill(ctx, b); err != nil {
			return 0, err
		}
		b = k.cur.Load()
		i = b.used.Add(1)
	}
}

// NextN appends n numbers for key to dst. It takes as many as it can from the
// current block with one atomic add. On error, dst holds the numbers issued
// before it.
func (s *Segment) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN(%q) with n=%d", ErrInvalidArgument, key, n)
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	if n == 0 {
		return dst, nil
	}
	k := s.state(key)
	for want := int64(n); want > 0; {
		b := k.cur.Load()
		take := max(1, min(want, b.size-b.used.Load()))
		end := b.used.Add(take)
		start := end - take + 1
		if start > b.size {
			if err := k.refill(ctx, b); err != nil {
				return dst, err
			}
			continue
		}
		last := min(end, b.size)
		if start <= b.threshold && b.threshold <= last {
			k.prefetch()
		}
		for i := start; i <= last; i++ {
			dst = append(dst, b.first+i-1)
		}
		want -= last - start + 1
	}
	return dst, nil
}

// prefetch starts fetching the next block unless one is buffered or in
// flight. It runs once per block, in the caller that crosses the threshold.
func (k *segKey) prefetch() {
	k.mu.Lock()
	k.prefetchLocked()
	k.mu.Unlock()
}

func (k *segKey) prefetchLocked() {
	if k.next != nil || k.inflight != nil || k.high == math.MaxInt64 {
		return
	}
	if k.failures > 0 && k.s.opts.Now().Before(k.retryAt) {
		return // the caller that finds the block spent decides
	}
	k.startFetch()
}

// refill is called when the block b was found spent. It returns nil once the
// caller should try again (a new block is current), or the error to return.
func (k *segKey) refill(ctx context.Context, b *block) error {
	k.mu.Lock()
	if k.s.closed.Load() {
		k.mu.Unlock()
		return ErrClosed
	}
	if k.cur.Load() != b {
		k.mu.Unlock()
		return nil
	}
	if k.next != nil {
		k.install(k.next)
		k.next = nil
		k.mu.Unlock()
		return nil
	}
	f := k.inflight
	if f == nil {
		if k.high == math.MaxInt64 {
			k.mu.Unlock()
			return fmt.Errorf("%w: key %q reached %d", ErrExhausted, k.key, int64(math.MaxInt64))
		}
		if k.failures > 0 && k.s.opts.Now().Before(k.retryAt) {
			err := k.lastErr
			k.mu.Unlock()
			return err
		}
		if f = k.startFetch(); f == nil {
			k.mu.Unlock()
			return ErrClosed
		}
	}
	k.s.waits.Add(1)
	k.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	case <-k.s.ctx.Done():
		return ErrClosed
	}
}

// install makes b the current block; k.mu is held. If b is already past its
// threshold (Floor skipped into it), the next fetch starts now.
func (k *segKey) install(b *block) {
	k.cur.Store(b)
	if b.used.Load() >= b.threshold {
		k.prefetchLocked()
	}
}

// startFetch starts the key's one fetch; k.mu is held. It returns nil if the
// Segment is closed.
func (k *segKey) startFetch() *fetch {
	s := k.s
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	s.wg.Add(1)
	s.mu.Unlock()

	now := s.opts.Now()
	if !k.lastFetch.IsZero() {
		switch d := now.Sub(k.lastFetch); {
		case d < s.opts.Target:
			k.step = min(k.step, math.MaxInt64/2) * 2
		case d > 4*s.opts.Target:
			k.step /= 2
		}
		k.step = min(max(k.step, s.opts.MinStep), s.opts.MaxStep)
	}
	k.lastFetch = now
	f := &fetch{done: make(chan struct{}), n: min(k.step, math.MaxInt64-k.high), epoch: k.epoch}
	k.inflight = f
	go k.run(f)
	return f
}

// run performs fetch f in the background.
func (k *segKey) run(f *fetch) {
	defer k.s.wg.Done()
	ctx, cancel := context.WithTimeout(k.s.ctx, k.s.opts.FetchTimeout)
	r, err := k.s.allocate(ctx, k.key, f.n)
	cancel()
	k.s.fetches.Add(1)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.inflight = nil
	f.err = k.accept(f, r, err)
	close(f.done)
}

// allocate calls the Allocator, turning a panic into an error.
func (s *Segment) allocate(ctx context.Context, key string, n int64) (r Range, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sequence: %T.Allocate(%q, %d) panicked: %v", s.alloc, key, n, p)
		}
	}()
	return s.alloc.Allocate(ctx, key, n)
}

// accept places the result of fetch f; k.mu is held. It returns the error
// for the callers waiting on f, nil if they should try again.
func (k *segKey) accept(f *fetch, r Range, err error) error {
	s := k.s
	if s.closed.Load() {
		return ErrClosed
	}
	if err == nil && (r.First < 1 || r.Len() == 0) {
		err = fmt.Errorf("sequence: %T.Allocate(%q, %d) returned the invalid range %v", s.alloc, k.key, f.n, r)
	}
	if err != nil {
		s.errs.Add(1)
		if !errors.Is(err, ErrExhausted) { // exhaustion is final, not an outage
			err = fmt.Errorf("%w: key %q: %w", ErrUnavailable, k.key, err)
		}
		k.fail(err)
		return err
	}
	b := &block{first: r.First, size: r.Len()}
	if r.First <= k.high {
		if f.epoch == k.epoch {
			s.regressions.Add(1)
			err := fmt.Errorf("%w: key %q: the allocator returned %v, not above %d, the highest number seen", ErrRegressed, k.key, r, k.high)
			k.fail(err)
			return err
		}
		// Floor raised the key while this block was being fetched: keep
		// only the part above the floor, if any.
		if r.Last <= k.high {
			return nil
		}
		b.used.Store(k.high - r.First + 1)
	}
	k.failures, k.lastErr, k.retryAt = 0, nil, time.Time{}
	k.high = r.Last
	b.threshold = s.opts.threshold(b.size)
	if cur := k.cur.Load(); cur.used.Load() >= cur.size {
		k.install(b)
	} else {
		k.next = b
	}
	return nil
}

// fail records a failed fetch; k.mu is held.
func (k *segKey) fail(err error) {
	k.failures++
	k.lastErr = err
	backoff := retryMax
	if k.failures <= 8 {
		backoff = min(retryMin<<(k.failures-1), retryMax)
	}
	k.retryAt = k.s.opts.Now().Add(backoff)
}

// Floor makes every number issued for key after Floor returns greater than
// floor. It raises the Allocator's floor first and then skips buffered
// numbers at or below floor. A floor at or below what was issued is a no-op.
// Floor returns an error wrapping errors.ErrUnsupported if the Allocator is
// not a [Floorer], and one wrapping [ErrInvalidArgument] if floor < 0. A
// successful Floor also ends a retry backoff, so it is the way to recover a
// key whose store went backwards (see [ErrRegressed]).
func (s *Segment) Floor(ctx context.Context, key string, floor int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	if floor < 0 {
		return fmt.Errorf("%w: Floor(%q, %d): the floor is negative", ErrInvalidArgument, key, floor)
	}
	fl, ok := s.alloc.(Floorer)
	if !ok {
		return fmt.Errorf("sequence: Floor(%q): %T is not a Floorer: %w", key, s.alloc, errors.ErrUnsupported)
	}
	if err := fl.Floor(ctx, key, floor); err != nil {
		return fmt.Errorf("sequence: Floor(%q, %d): %w", key, floor, err)
	}
	k := s.state(key)
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	cur := k.cur.Load()
	skipTo(cur, floor)
	if k.next != nil {
		if skipTo(k.next, floor); k.next.used.Load() >= k.next.size {
			k.next = nil
		}
	}
	if floor > k.high {
		k.high = floor
		k.epoch++ // a block in flight may be below the new floor
	}
	k.failures, k.lastErr, k.retryAt = 0, nil, time.Time{}
	if cur.used.Load() >= cur.threshold && cur != spent {
		k.prefetchLocked()
	}
	return nil
}

// skipTo marks every number of b at or below floor as used.
func skipTo(b *block, floor int64) {
	want := min(floor-b.first+1, b.size)
	for {
		u := b.used.Load()
		if u >= want || b.used.CompareAndSwap(u, want) {
			return
		}
	}
}

// Close stops the Segment: it cancels background fetches and waits for them
// to return, and every later call returns an error wrapping [ErrClosed].
// Buffered numbers are dropped. Closing twice returns ErrClosed.
func (s *Segment) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed.Store(true)
	s.mu.Unlock()
	s.cancel()
	s.keys.Range(func(_, v any) bool {
		k := v.(*segKey)
		k.mu.Lock()
		k.cur.Store(spent)
		k.next = nil
		k.mu.Unlock()
		return true
	})
	s.wg.Wait()
	return nil
}

// Stats returns the Segment's counters.
func (s *Segment) Stats() SegmentStats {
	return SegmentStats{
		Fetches:     s.fetches.Load(),
		Waits:       s.waits.Load(),
		Errors:      s.errs.Load(),
		Regressions: s.regressions.Load(),
		Keys:        s.nkeys.Load(),
	}
}

// KeyStats returns the state of key, or false if the Segment has never seen
// key.
func (s *Segment) KeyStats(key string) (KeyStats, bool) {
	v, ok := s.keys.Load(key)
	if !ok {
		return KeyStats{}, false
	}
	k := v.(*segKey)
	k.mu.Lock()
	defer k.mu.Unlock()
	st := KeyStats{Step: k.step, Fetching: k.inflight != nil, LastError: k.lastErr}
	if b := k.cur.Load(); b.size > 0 {
		st.Current = Range{First: b.first, Last: b.first + b.size - 1}
		st.Issued = min(b.used.Load(), b.size)
	}
	if b := k.next; b != nil {
		st.Next = Range{First: b.first + min(b.used.Load(), b.size), Last: b.first + b.size - 1}
	}
	return st, true
}
