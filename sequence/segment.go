package sequence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sngen/sn/sequence/journal"
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
// the process ends.
//
// A Segment keeps a small state for every key in use (about 150 bytes for a
// key used once) and releases the keys that go unused for
// [SegmentOptions.Idle]: their buffered numbers are a gap, and their next
// call fetches a new block from the store, above every number the store
// handed out. A released key's new state knows nothing of the numbers
// issued before, as after a restart: the store is the record. So a key
// whose last fetch failed (a store that went backwards, above all) is
// never released, and neither is a key bound to a [Handle].
//
// A Segment is safe for concurrent use. It implements [Batcher], [Binder],
// [Floorer] and io.Closer.
type Segment struct {
	alloc Allocator
	opts  SegmentOptions

	keys  keyTable
	locks [256]sync.Mutex // the keys' locks, striped: see SegmentKey.lock
	// voids orders a void against the fetches of its key's stripe: a
	// fetch holds it read from the store's reservation to the block's
	// arrival, a void (holding.Note) holds it from its check to its note.
	voids [256]sync.RWMutex
	start time.Time // the origin of SegmentKey.lastFetch

	by       string          // the Segment's name in journals (WithBy)
	ctx      context.Context // parent of every fetch; cancelled by Close
	cancel   context.CancelFunc
	mu       sync.Mutex // orders closing against wg.Add
	closed   atomic.Bool
	sweeping bool           // the sweeper runs; under mu
	wg       sync.WaitGroup // background fetches and the sweeper
	fetching sync.WaitGroup // background fetches: Close lets them finish

	expiring sync.Map // key -> true: keys whose counter the store may delete (Expire)
	closing  struct { // blocks that arrived after Close began, to hand back
		sync.Mutex
		m map[string][]Range
	}
	limits sync.Map // key base -> int64: the largest number printed (Limit)
	highs  struct { // the last number of keys released, for a Lost note (see lostFrom)
		sync.Mutex
		m map[string]int64
	}
	notes struct { // journal records to write (note)
		sync.Mutex
		q       []keyEvent
		running bool
		dropped map[string]bool // keys a record of which was dropped or failed: no Closed for them
	}

	fetches, waits, errs, regressions, released, late, notesLost atomic.Int64
	warned                                                       atomic.Int64 // when lateFetch last logged, in Unix nanoseconds
	fetchTime                                                    atomic.Int64 // nanoseconds spent in Allocator calls
	lastStep                                                     atomic.Int64 // the size the last fetch asked for
}

// SegmentStats are counters of a [Segment] since it was created.
type SegmentStats struct {
	Fetches     int64 // calls to the Allocator, successful or not
	Waits       int64 // times a call waited for a block to arrive
	Errors      int64 // Allocator calls that failed or returned an invalid Range
	Regressions int64 // blocks refused because they were not above every number seen
	Keys        int64 // keys the Segment holds state for now
	Released    int64 // keys released (SegmentOptions.Idle, Release)
	Late        int64 // blocks used up before the block fetched ahead arrived: callers waited
	// NotesLost counts journal records the Segment could not write (the
	// store failed, or too many waited): their keys' numbers stay open in
	// an audit, issued or not, until the keys are closed again.
	NotesLost int64
	// FetchTime is the time spent in Allocator calls: with Fetches, the
	// store's mean latency.
	FetchTime time.Duration
	// LastStep is the size the last fetch asked for, by whichever key
	// fetched last; KeyStats.Step is each key's own.
	LastStep int64
}

// Add returns the stats of a and b as those of one store: the counters
// and keys summed, the larger LastStep.
func (a SegmentStats) Add(b SegmentStats) SegmentStats {
	return SegmentStats{
		Fetches:     a.Fetches + b.Fetches,
		Waits:       a.Waits + b.Waits,
		Errors:      a.Errors + b.Errors,
		Regressions: a.Regressions + b.Regressions,
		Keys:        a.Keys + b.Keys,
		Released:    a.Released + b.Released,
		Late:        a.Late + b.Late,
		NotesLost:   a.NotesLost + b.NotesLost,
		FetchTime:   a.FetchTime + b.FetchTime,
		LastStep:    max(a.LastStep, b.LastStep),
	}
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

// maxEarly bounds SegmentKey.early: at most, the next fetch starts after
// Prefetch/16 of a block.
const maxEarly = 4

// warnFixedStep logs, at most every 10 seconds per Segment, that key k
// used up a block of a fixed step (MinStep == MaxStep) before the next
// arrived: the step is too small for the rate, and callers will wait at
// blocks until the key fetches early enough, or at every block.
func (s *Segment) warnFixedStep(k *SegmentKey) {
	now := time.Now().UnixNano()
	last := s.warned.Load()
	if now-last < int64(10*time.Second) || !s.warned.CompareAndSwap(last, now) {
		return
	}
	s.opts.Logger.Warn("sequence: callers waited for a block: the fixed step is too small for the rate; raise MaxStep",
		"key", k.key, "step", k.step, "late", s.late.Load())
}

// Retry backoff after a failed fetch; see the Segment doc comment.
const (
	retryMin = 50 * time.Millisecond
	retryMax = time.Second
)

// NewSegment returns a Segment that reserves blocks from a. Zero fields of
// opts take the defaults documented on [SegmentOptions]; a nil a, or a
// field [SegmentOptions.Validate] finds out of range, is an error wrapping
// [ErrInvalidArgument]. The Segment starts no goroutine until it is used;
// call [Segment.Close] to stop its background fetches.
func NewSegment(a Allocator, opts SegmentOptions) (*Segment, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: NewSegment with a nil Allocator", ErrInvalidArgument)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	by := fmt.Sprintf("%s segment %d", journal.ProcessName(), segments.Add(1))
	ctx, cancel := context.WithCancel(journal.WithBy(context.Background(), by))
	s := &Segment{alloc: a, opts: opts.withDefaults(), by: by, ctx: ctx, cancel: cancel}
	s.start = s.opts.Now()
	s.keys.init()
	return s, nil
}

// block is a reserved range [first, first+size-1]. used counts the numbers
// taken: the caller whose add returns i (1-based) owns first+i-1 if i <= size.
// used only grows, and past size it means the block is spent.
//
// fast bounds the takes that need nothing more: an add that returns i <
// fast takes its number and returns. It starts at the prefetch threshold;
// the first take to reach it raises it past size ([block.cross]) and starts
// the next fetch, so exactly one caller per block does.
type block struct {
	first int64
	size  int64
	used  atomic.Int64
	fast  atomic.Int64
}

// cross reports whether a take that reached i is the first to reach b's
// prefetch threshold, and so must start the next fetch; it then lets every
// take after it through the fast path.
func (b *block) cross(i int64) bool {
	f := b.fast.Load()
	return i >= f && f <= b.size && b != spent && b.fast.CompareAndSwap(f, b.size+1)
}

// paddedBlock is the block of a busy key: 128 bytes, which the allocator
// places on two cache lines of their own, so that the adds of one key
// never contend with another key's. A key's first block is not padded: a
// key used once (one per customer, say) stays small.
type paddedBlock struct {
	block
	_ [128 - 32]byte
}

// newBlock returns a block holding r, padded if busy.
func newBlock(r Range, busy bool) *block {
	if busy {
		p := &paddedBlock{block: block{first: r.First, size: r.Len()}}
		return &p.block
	}
	return &block{first: r.First, size: r.Len()}
}

// spent is the block of a key that has none: every add misses it.
var spent = &block{}

// fetch is one Allocate call for a key: in flight until done is closed,
// then either a block (b) waiting to become current, or a failure (err)
// that holds the key's retry backoff.
type fetch struct {
	done     chan struct{} // closed once the result is set
	n        int64         // numbers asked for
	epoch    uint32        // SegmentKey.epoch when the fetch started
	late     bool          // a caller found the block spent while this fetch was in flight
	b        *block        // the block, once arrived and not yet current
	err      error         // the failure, once failed
	failures int           // failed fetches in a row, this one included
	retryAt  time.Time     // after a failure: no fetch before this time
	started  time.Time     // when the fetch was asked of the Allocator
}

// arrived reports whether f is no longer in flight; k's lock is held.
func (f *fetch) arrived() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// SegmentKey is a Segment's state for one key, and the key's bound
// handle: [Segment.Bound] returns it, and [Segment.Bind] as a [Handle].
// Its Next takes a number from the key's current block with one atomic
// add and a compare; its TryNext, which the compiler inlines into the
// caller, with a load and a compare-and-swap.
//
// (The fields after key are guarded by the key's lock, one of the
// Segment's striped mutexes: a key used once costs 80 bytes here.)
type SegmentKey struct {
	cur atomic.Pointer[block]
	s   *Segment
	key string

	pinned    bool          // bound to a Handle: never released
	released  bool          // out of the table: callers look the key up again
	counts    uint8         // idle in the low 3 bits, early in the next 3, doubt in the 7th: see idleSweeps, maxEarly and doubt
	stripe    uint8         // the index of the key's lock in s.locks
	epoch     uint32        // raised by Floor when it raises high
	last      *fetch        // the last fetch, while in flight, not yet installed or failed; nil once installed
	high      int64         // last number of the newest block accepted, or the floor if higher
	step      int64         // size of the next block to fetch
	lastFetch time.Duration // when the last fetch started, since s.start; noFetch before the first
	mark      int64         // the key's position at the last sweep
}

// idle returns how many sweeps in a row found the key unused; k's lock is
// held.
func (k *SegmentKey) idle() uint8 { return k.counts & 0x7 }

// setIdle sets idle (at most 15); k's lock is held.
func (k *SegmentKey) setIdle(n uint8) { k.counts = k.counts&^0x7 | min(n, 0x7) }

// early returns the key's prefetch shifts: each fetch of a fixed step that
// came late halves the share of a block used before the next fetch starts.
// k's lock is held.
func (k *SegmentKey) early() uint8 { return k.counts >> 3 & 0x7 }

// setEarly sets early (at most 15); k's lock is held.
func (k *SegmentKey) setEarly(n uint8) { k.counts = k.counts&^0x38 | min(n, 0x7)<<3 }

// doubt reports whether a fetch failed since the key's last block: the
// store may have reserved a block that never arrived. k's lock is held.
func (k *SegmentKey) doubt() bool { return k.counts&0x40 != 0 }

// setDoubt sets doubt; k's lock is held.
func (k *SegmentKey) setDoubt(d bool) {
	k.counts &^= 0x40
	if d {
		k.counts |= 0x40
	}
}

// lock locks the key's state.
func (k *SegmentKey) lock() { k.s.locks[k.stripe].Lock() }

// unlock unlocks the key's state.
func (k *SegmentKey) unlock() { k.s.locks[k.stripe].Unlock() }

// inflight returns the key's fetch in flight, or nil; k's lock is held.
func (k *SegmentKey) inflight() *fetch {
	if f := k.last; f != nil && !f.arrived() {
		return f
	}
	return nil
}

// next returns the block fetched ahead, or nil; k's lock is held.
func (k *SegmentKey) next() *block {
	if f := k.last; f != nil && f.b != nil && f.arrived() {
		return f.b
	}
	return nil
}

// failed returns the key's last failed fetch, or nil; k's lock is held.
func (k *SegmentKey) failed() *fetch {
	if f := k.last; f != nil && f.err != nil && f.arrived() {
		return f
	}
	return nil
}

// backingOff reports whether the key failed a fetch and its backoff has
// not ended; k's lock is held.
func (k *SegmentKey) backingOff() bool {
	f := k.failed()
	return f != nil && k.s.opts.Now().Before(f.retryAt)
}

// noFetch is SegmentKey.lastFetch before the key's first fetch.
const noFetch = time.Duration(math.MinInt64)

// errReleased tells a caller that the key it holds was released: look it
// up again. It never leaves the package.
var errReleased = errors.New("sequence: key released")

// state returns the state of key, adding it if the Segment has none. A
// pinned state is never released.
func (s *Segment) state(key string, pin bool) *SegmentKey {
	for {
		k := s.keys.loadOrAdd(key, func() *SegmentKey {
			key := strings.Clone(key)
			k := &SegmentKey{s: s, key: key, step: s.opts.Step, lastFetch: noFetch, stripe: uint8(maphash.String(s.keys.seed, key))}
			k.cur.Store(spent)
			s.startSweeper()
			return k
		})
		if !pin {
			return k
		}
		k.lock()
		released := k.released
		k.pinned = !released
		k.unlock()
		if !released {
			return k
		}
	}
}

// Next returns the next number for key. It waits for the store only when the
// key has no buffered number, which in steady state happens only for a key's
// first call.
//
// ctx is consulted when the call may wait: for a block from the store.
// A number already in memory is returned whatever ctx says.
func (s *Segment) Next(ctx context.Context, key string) (int64, error) {
	for {
		k := s.keys.load(key)
		if k == nil {
			k = s.state(key, false)
		}
		// The hot path, as in SegmentKey.Next.
		b := k.cur.Load()
		i := b.used.Add(1)
		if i < b.fast.Load() {
			return b.first + i - 1, nil
		}
		if n, err := k.takeSlow(ctx, b, i); err != errReleased {
			return n, err
		}
	}
}

// Bind returns a Handle for key that skips the key lookup of [Segment.Next].
// A Handle is safe for concurrent use and shares its counter with Next. A
// bound key is never released.
func (s *Segment) Bind(key string) Handle { return s.state(key, true) }

// Bound returns the bound handle of key as its concrete type: [Segment.Bind]
// without the interface call, and with [SegmentKey.TryNext], which the
// compiler inlines into its caller.
func (s *Segment) Bound(key string) *SegmentKey { return s.state(key, true) }

// Next returns the next number for the key: a pointer load, one atomic add
// on the current block and a compare when the block has numbers. ctx is
// consulted when the call may wait, for a block from the store; a number
// already in memory is returned whatever ctx says.
func (k *SegmentKey) Next(ctx context.Context) (int64, error) {
	b := k.cur.Load()
	// A block's bounds never change: read before the add, they load while
	// it runs instead of waiting for it.
	first, fast := b.first, b.fast.Load()
	i := b.used.Add(1)
	if i < fast {
		return first + i - 1, nil
	}
	return k.takeSlow(ctx, b, i)
}

// TryNext takes the next number for the key when it can do so from memory
// without a call: it reports false, having taken nothing, when the current
// block is spent, when the number would be the one that starts the next
// fetch, or when another caller took the number it aimed at in the
// meantime. Then call [SegmentKey.Next], which does all of that:
//
//	n, ok := k.TryNext()
//	if !ok {
//		n, err = k.Next(ctx)
//	}
//
// Its body is small enough for the compiler to inline: a number costs a
// pointer load, a load and a compare-and-swap on the current block, and no
// call. Under contention the swap fails more often than [SegmentKey.Next]'s
// add, which always succeeds; TryNext is for a key used mostly by one
// goroutine at a time.
func (k *SegmentKey) TryNext() (int64, bool) {
	b := k.cur.Load()
	u := b.used.Load()
	if u+1 < b.fast.Load() && b.used.CompareAndSwap(u, u+1) {
		return b.first + u, true
	}
	return 0, false
}

// takeSlow finishes a take whose add i on block b crossed the prefetch
// threshold or missed the block.
func (k *SegmentKey) takeSlow(ctx context.Context, b *block, i int64) (int64, error) {
	for {
		if i <= b.size {
			if b.cross(i) {
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
	k := s.state(key, false)
	for want := int64(n); want > 0; {
		b := k.cur.Load()
		take := max(1, min(want, b.size-b.used.Load()))
		end := b.used.Add(take)
		start := end - take + 1
		if start > b.size {
			if err := k.refill(ctx, b); err == errReleased {
				k = s.state(key, false)
			} else if err != nil {
				return dst, err
			}
			continue
		}
		last := min(end, b.size)
		if b.cross(last) {
			k.prefetch()
		}
		got := int(last - start + 1)
		at := len(dst)
		dst = slices.Grow(dst, got)[:at+got]
		vals, first := dst[at:], b.first+start-1
		for i := range vals {
			vals[i] = first + int64(i)
		}
		want -= int64(got)
	}
	return dst, nil
}

// prefetch starts fetching the next block unless one is buffered or in
// flight. It runs once per block, in the caller that crosses the threshold.
func (k *SegmentKey) prefetch() {
	k.lock()
	k.prefetchLocked()
	k.unlock()
}

func (k *SegmentKey) prefetchLocked() {
	if k.released || k.next() != nil || k.inflight() != nil || k.high == math.MaxInt64 {
		return
	}
	if k.backingOff() {
		return // the caller that finds the block spent decides
	}
	k.startFetch()
}

// refill is called when the block b was found spent. It returns nil once the
// caller should try again (a new block is current), or the error to return.
func (k *SegmentKey) refill(ctx context.Context, b *block) error {
	k.lock()
	if k.s.closed.Load() {
		k.unlock()
		return ErrClosed
	}
	if k.released {
		k.unlock()
		return errReleased
	}
	if k.cur.Load() != b {
		k.unlock()
		return nil
	}
	if next := k.next(); next != nil {
		k.last = nil
		k.install(next)
		k.unlock()
		return nil
	}
	f := k.inflight()
	if f != nil && !f.late && b != spent {
		// The fetch started at the threshold of b has not arrived, and b
		// is spent (a key's first fetch, with no block before it, is not
		// late). An adaptive step grows by itself; a fixed one cannot, so
		// its key fetches earlier from now on, and the Segment says so.
		f.late = true
		k.s.late.Add(1)
		if k.s.opts.MinStep == k.s.opts.MaxStep {
			k.setEarly(min(k.early()+1, maxEarly))
			k.s.warnFixedStep(k)
		}
	}
	if f == nil {
		if k.high == math.MaxInt64 {
			k.unlock()
			return fmt.Errorf("%w: key %q reached %d", ErrExhausted, k.key, int64(math.MaxInt64))
		}
		if k.backingOff() {
			err := k.last.err
			k.unlock()
			return err
		}
		if f = k.startFetch(); f == nil {
			k.unlock()
			return ErrClosed
		}
	}
	k.s.waits.Add(1)
	k.unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return f.err
		}
		return nil
	case <-ctx.Done():
		// Say what the call waited for: a store that hangs on a commit
		// (a synchronous standby that stopped answering) shows here.
		return fmt.Errorf("sequence: key %q: no block from the store yet, %v after %T.Allocate was called (it goes on, bounded by FetchTimeout %v): %w",
			k.key, time.Since(f.started).Round(time.Millisecond), k.s.alloc, k.s.opts.FetchTimeout, ctx.Err())
	case <-k.s.ctx.Done():
		return ErrClosed
	}
}

// install makes b the current block; k's lock is held. If b is already
// past its threshold (Floor skipped into it), the next fetch starts now.
func (k *SegmentKey) install(b *block) {
	k.cur.Store(b)
	if b.cross(b.used.Load()) {
		k.prefetchLocked()
	}
}

// startFetch starts the key's one fetch; k's lock is held. It returns nil
// if the Segment is closed.
func (k *SegmentKey) startFetch() *fetch {
	s := k.s
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	s.wg.Add(1)
	s.fetching.Add(1)
	s.mu.Unlock()

	now := s.opts.Now().Sub(s.start)
	if k.lastFetch != noFetch {
		switch d := now - k.lastFetch; {
		case d < s.opts.Target:
			k.step = min(k.step, math.MaxInt64/2) * 2
		case d > 4*s.opts.Target:
			k.step /= 2
		}
		k.step = min(max(k.step, s.opts.MinStep), s.opts.MaxStep)
	}
	k.lastFetch = now
	f := &fetch{done: make(chan struct{}), n: min(k.step, math.MaxInt64-k.high, s.cap(k.key, k.high)), epoch: k.epoch, started: time.Now()}
	if prev := k.failed(); prev != nil {
		f.failures = prev.failures
	}
	k.last = f
	go k.run(f)
	return f
}

// run performs fetch f in the background.
func (k *SegmentKey) run(f *fetch) {
	defer k.s.wg.Done()
	// From the reservation to the block's arrival, no void of the key's
	// stripe is checked: it would not see the block (see holding).
	k.s.voids[k.stripe].RLock()
	defer k.s.voids[k.stripe].RUnlock()
	ctx, cancel := context.WithTimeout(k.s.ctx, k.s.opts.FetchTimeout)
	start := time.Now()
	r, err := k.s.allocate(ctx, k.key, f.n)
	k.s.fetchTime.Add(int64(time.Since(start)))
	cancel()
	k.s.fetches.Add(1)
	k.s.lastStep.Store(f.n)

	k.lock()
	defer k.unlock()
	defer k.s.fetching.Done()
	k.accept(f, r, err)
	close(f.done)
	if f.err == nil && f.b == nil && k.last == f {
		k.last = nil // installed, or nothing left above the floor
	}
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

// accept places the result of fetch f; k's lock is held, f.done still
// open. It sets f.err for the callers waiting on f (nil if they should try
// again), and f.b when the block waits behind the current one.
func (k *SegmentKey) accept(f *fetch, r Range, err error) {
	s := k.s
	if s.closed.Load() || k.released {
		f.err = ErrClosed
		valid := err == nil && r.First >= 1 && r.Len() > 0
		switch {
		case k.released && valid:
			f.err = errReleased
			s.note(k.key, released([]Range{r}, 0, "arrived after the key was released")...)
		case k.released:
			f.err = errReleased
		case valid:
			s.unusedAtClose(k.key, r) // reserved as Close cancelled it: handed back too
		case err != nil:
			// Cancelled by Close: the store may have reserved the block
			// all the same, and it stays open in the journal, unknown.
			s.errs.Add(1)
		}
		return
	}
	if err == nil && (r.First < 1 || r.Len() == 0) {
		err = fmt.Errorf("sequence: %T.Allocate(%q, %d) returned the invalid range %v", s.alloc, k.key, f.n, r)
	}
	if err != nil {
		s.errs.Add(1)
		switch {
		case errors.Is(err, ErrExhausted): // exhaustion is final, not an outage
		case errors.Is(err, journal.ErrBehind): // the store's counter went back: refused, nothing reserved
			err = fmt.Errorf("%w: key %q: %w", ErrRegressed, k.key, err)
		default:
			err = fmt.Errorf("%w: key %q: %w", ErrUnavailable, k.key, err)
			k.setDoubt(true) // the store may have reserved it all the same
		}
		k.fail(f, err)
		return
	}
	if k.doubt() {
		// A failed fetch may have reserved a block whose answer was
		// lost: between the last block and this one, the journal is to
		// count none of this Segment's blocks as issued.
		if from := s.lostFrom(k); r.First > from {
			s.note(k.key, journal.Event{Kind: journal.Lost, Range: Range{First: from, Last: r.First - 1}, Reason: "a reservation whose answer was lost"})
		}
		k.setDoubt(false)
	}
	b := newBlock(r, k.high > 0)
	if r.First <= k.high {
		if f.epoch == k.epoch {
			s.regressions.Add(1)
			k.fail(f, fmt.Errorf("%w: key %q: the allocator returned %v, not above %d, the highest number seen", ErrRegressed, k.key, r, k.high))
			return
		}
		// Floor raised the key while this block was being fetched: keep
		// only the part above the floor, if any; the rest is never
		// issued, and the journal says so.
		cut := Range{First: r.First, Last: min(r.Last, k.high)}
		s.note(k.key, released([]Range{cut}, 0, "skipped by a floor raised while the block was fetched")...)
		if r.Last <= k.high {
			return
		}
		b.used.Store(k.high - r.First + 1)
	}
	k.high = r.Last
	b.fast.Store(max(1, s.opts.threshold(b.size)>>k.early()))
	if cur := k.cur.Load(); cur.used.Load() >= cur.size {
		k.last = nil
		k.install(b)
	} else {
		f.b = b
	}
}

// fail records that fetch f failed with err; k's lock is held.
func (k *SegmentKey) fail(f *fetch, err error) {
	f.err = err
	f.failures++
	backoff := retryMax
	if f.failures <= 8 {
		backoff = min(retryMin<<(f.failures-1), retryMax)
	}
	f.retryAt = k.s.opts.Now().Add(backoff)
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
	var k *SegmentKey
	for {
		k = s.state(key, false)
		k.lock()
		if !k.released {
			break
		}
		k.unlock()
	}
	defer k.unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	cur := k.cur.Load()
	skipped := []Range{skipTo(cur, floor)}
	if next := k.next(); next != nil {
		r := skipTo(next, floor)
		if skipped = append(skipped, r); next.used.Load() >= next.size {
			k.last = nil
		}
	}
	s.note(key, released(skipped, 0, fmt.Sprintf("skipped by the floor %d", floor))...)
	if floor > k.high {
		k.high = floor
		k.epoch++ // a block in flight may be below the new floor
	}
	if k.failed() != nil {
		k.last = nil // the backoff ends
	}
	if cur.cross(cur.used.Load()) {
		k.prefetchLocked()
	}
	return nil
}

// skipTo marks every number of b at or below floor as used, and returns
// those it marked.
func skipTo(b *block, floor int64) Range {
	if b == spent {
		return Range{}
	}
	want := min(floor-b.first+1, b.size)
	for {
		u := b.used.Load()
		if u >= want {
			return Range{}
		}
		if b.used.CompareAndSwap(u, want) {
			return Range{First: b.first + u, Last: b.first + want - 1}
		}
	}
}

// Close stops the Segment: every later call returns an error wrapping
// [ErrClosed]. It lets a background fetch in flight finish for up to a
// fifth of [SegmentOptions.FetchTimeout], then cancels it and waits for it
// to return.
// When the Allocator is a [Returner], Close hands back, per key, the
// numbers its current and prefetched blocks hold and nobody took, and a
// block a fetch it cancelled reserved all the same, if no process
// reserved numbers for the key since (a compare-and-set in the store): a
// restart then continues where the last number was issued,
// instead of after a gap of up to two blocks. It does not for a key whose
// counter the store may delete ([Segment.Expire]), and it tries for at
// most [SegmentOptions.FetchTimeout]; what it cannot hand back is a gap.
// Closing twice returns ErrClosed.
func (s *Segment) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed.Store(true)
	s.mu.Unlock()
	// A fetch in flight is let finish, for a fifth of FetchTimeout,
	// before it is cancelled: a block the store reserved and answered
	// goes back or is noted unused below, where a cancelled one whose
	// answer is lost stays open in the journal.
	finished := make(chan struct{})
	go func() { s.fetching.Wait(); close(finished) }()
	wait := time.NewTimer(s.opts.FetchTimeout / 5)
	select {
	case <-finished:
	case <-wait.C:
	}
	wait.Stop()
	s.cancel()
	back := map[string][]Range{}   // per key, what the Segment holds and nobody took, on top of the store's mark
	unused := map[string][]Range{} // per key, what it holds and nobody took, below the mark
	high := map[string]int64{}     // per key, the highest number it has seen
	doubt := map[string]bool{}     // keys a block of which may be lost: no Closed, their numbers stay open
	s.keys.each(func(k *SegmentKey) {
		k.lock()
		cur := k.cur.Load()
		r := seal(cur)
		k.cur.Store(spent)
		if next := k.next(); next != nil {
			nr := seal(next)
			switch {
			case nr.Len() == 0:
			case nr.First == next.first && r.Len() > 0 && r.Last == nr.First-1:
				r.Last = nr.Last // the current block's rest and all of the next
			default:
				unused[k.key] = append(unused[k.key], r)
				r = nr
			}
			k.last = nil
		}
		if r.Len() > 0 && r.Last == k.high {
			back[k.key] = append(back[k.key], r)
		} else if r.Len() > 0 {
			unused[k.key] = append(unused[k.key], r)
		}
		if k.high > 0 {
			high[k.key] = k.high
		}
		if k.doubt() {
			doubt[k.key] = true
		}
		k.unlock()
	})
	s.wg.Wait()
	// A fetch Close cancelled may have reserved its block all the same:
	// it is above the others, and goes back first.
	s.closing.Lock()
	for key, rs := range s.closing.m {
		back[key] = append(back[key], rs...)
		for _, r := range rs {
			high[key] = max(high[key], r.Last)
		}
	}
	s.closing.Unlock()
	ctx, cancel := context.WithTimeout(journal.WithBy(context.Background(), s.by), s.opts.FetchTimeout)
	defer cancel()
	if ret, ok := s.alloc.(Returner); ok && len(back) > 0 {
		for key, rs := range back {
			if _, exp := s.expiring.Load(key); exp {
				continue
			}
			slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(b.Last, a.Last) })
			for len(rs) > 0 { // from the top down: each goes back only onto the mark it ends at
				if ok, err := ret.Return(ctx, key, rs[0]); !ok || err != nil {
					break
				}
				high[key] = min(high[key], rs[0].First-1) // it holds nothing above
				rs = rs[1:]
			}
			back[key] = rs
			if ctx.Err() != nil {
				break
			}
		}
	}
	if j := journal.Of(s.alloc); j != nil {
		s.notes.Lock()
		q := s.notes.q
		s.notes.q = nil
		s.notes.Unlock()
		for key, h := range high {
			if doubt[key] {
				h = 0 // no Closed: a block that may be lost stays open
			}
			q = append(q, keyEventsOf(key, released(append(unused[key], back[key]...), h, "unused when the process closed")...)...)
		}
		ctx, cancel := context.WithTimeout(journal.WithBy(context.Background(), s.by), s.opts.FetchTimeout)
		defer cancel()
		s.writeNotes(ctx, j, q)
	}
	return nil
}

func keyEventsOf(key string, es ...journal.Event) []keyEvent {
	q := make([]keyEvent, len(es))
	for i, e := range es {
		q[i] = keyEvent{key, e}
	}
	return q
}

// unusedAtClose records r, a block of key that arrived after Close began,
// to hand back.
func (s *Segment) unusedAtClose(key string, r Range) {
	s.closing.Lock()
	defer s.closing.Unlock()
	if s.closing.m == nil {
		s.closing.m = map[string][]Range{}
	}
	s.closing.m[key] = append(s.closing.m[key], r)
}

// seal takes every number of b that nobody took, so that no caller takes
// one after, and returns them: the unused end of the block, or an empty
// Range. A caller whose add comes after finds the block spent.
func seal(b *block) Range {
	if b == spent || b.size == 0 {
		return Range{}
	}
	u := b.used.Swap(math.MaxInt64 / 2)
	if u >= b.size {
		return Range{}
	}
	return Range{First: b.first + u, Last: b.first + b.size - 1}
}

// Stats returns the Segment's counters.
func (s *Segment) Stats() SegmentStats {
	return SegmentStats{
		Fetches:     s.fetches.Load(),
		Waits:       s.waits.Load(),
		Errors:      s.errs.Load(),
		Regressions: s.regressions.Load(),
		Keys:        int64(s.keys.len()),
		Released:    s.released.Load(),
		Late:        s.late.Load(),
		NotesLost:   s.notesLost.Load(),
		FetchTime:   time.Duration(s.fetchTime.Load()),
		LastStep:    s.lastStep.Load(),
	}
}

// Keys returns, sorted, up to limit of the keys the Segment holds state
// for (all of them when limit <= 0): those [Segment.KeyStats] describes.
// With more keys than limit, which are returned is unspecified;
// [SegmentStats].Keys counts them all.
func (s *Segment) Keys(limit int) []string {
	var keys []string
	s.keys.each(func(k *SegmentKey) {
		if limit <= 0 || len(keys) < limit {
			keys = append(keys, k.key)
		}
	})
	slices.Sort(keys)
	return keys
}

// KeyStats returns the state of key, or false if the Segment has never seen
// key.
func (s *Segment) KeyStats(key string) (KeyStats, bool) {
	k := s.keys.load(key)
	if k == nil {
		return KeyStats{}, false
	}
	k.lock()
	defer k.unlock()
	st := KeyStats{Step: k.step, Fetching: k.inflight() != nil}
	if f := k.failed(); f != nil {
		st.LastError = f.err
	}
	if b := k.cur.Load(); b.size > 0 {
		st.Current = Range{First: b.first, Last: b.first + b.size - 1}
		st.Issued = min(b.used.Load(), b.size)
	}
	if b := k.next(); b != nil {
		st.Next = Range{First: b.first + min(b.used.Load(), b.size), Last: b.first + b.size - 1}
	}
	return st, true
}

// Allocator returns the Allocator the Segment reserves its blocks from.
// Blocks reserved from it directly (by a service handing blocks to its
// clients) are disjoint from the Segment's.
func (s *Segment) Allocator() Allocator { return s.alloc }

// Options returns the Segment's options, with the defaults filled in.
func (s *Segment) Options() SegmentOptions { return s.opts }
