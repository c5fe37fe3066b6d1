package sequence

import (
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"

	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Queued keeps, for each key, a queue of numbers drawn ahead from a Gen, and
// refills it in the background before it runs out, so that a caller
// rarely waits for the Gen. The queue is sized by the key's measured rate of
// use, as the pre-generated queues of seed 000 are: it holds about
// [QueuedOptions.Lead] of demand, between Min and Max numbers. A recent
// rate and a long-term one are both kept, and the larger one sizes the
// queue, so that a burst fills it at once and a quiet spell does not empty
// it.
//
// Queued is for a Gen that cannot reserve blocks: a strict Redis counter,
// a Balanced, a snowflake. In front of an [Allocator], use a [Segment]: it
// reserves a whole block in one call and adapts the block to the rate, where
// Queued asks its Gen for each number (or each batch, from a [Batcher]).
//
// A key's numbers are handed out in increasing order. Numbers still queued
// when the process stops, or when Close is called, are never issued: a gap,
// never a repeat.
type Queued struct {
	gen    Gen
	opts   QueuedOptions
	ctx    context.Context // the fills' context, cancelled by Close
	cancel context.CancelFunc
	fills  sync.WaitGroup
	closed atomic.Bool

	mu   sync.Mutex
	keys map[string]*queue

	draws sync.RWMutex // held read by each draw until its numbers are queued (see holder)
}

// QueuedOptions configure a [Queued]. The zero value is ready to use.
type QueuedOptions struct {
	// Lead is how long the queue of a key lasts at its measured rate: a
	// refill is started when half of it is left. Zero means 50 ms.
	Lead time.Duration
	// Min and Max bound a key's queue. Zero means 16 and
	// [DefaultQueuedMax].
	Min, Max int
	// Now is the clock that measures the rates; nil means time.Now.
	Now func() time.Time
	// Idle is how long a key's queue is kept unused before it is dropped,
	// so that keys used once (a key per customer) do not pile up: its
	// queued numbers become a gap, and the key's next call starts a new
	// queue. Zero means 10 minutes; a negative Idle keeps every queue.
	Idle time.Duration
	// FillTimeout bounds each refill: a call to the Gen that has not
	// returned by then is cancelled, and the callers waiting for it get
	// an error wrapping [ErrUnavailable], so that one call that hangs
	// does not wedge its key (nor, under a [Balanced], the member). The
	// next caller starts another refill. Numbers the abandoned call
	// returns late are still queued. Zero means 5 seconds.
	FillTimeout time.Duration
}

// queue is one key's numbers drawn ahead.
type queue struct {
	mu       sync.Mutex
	buf      []int64 // increasing; the next number is buf[head]
	head     int
	tail     int64 // the largest number ever queued, or the floor
	fill     *fill // the refill in flight, or nil
	target   int   // the queue's size at the measured rate
	used     bool  // taken from since the last sweep
	released bool  // dropped from the Queued: callers look the key up again

	taken    int64     // numbers taken since since
	since    time.Time // when the rates were last updated
	recent   float64   // numbers per second, quick to follow the rate
	longTerm float64   // numbers per second, slow to follow it
}

// fill is one refill of a queue.
type fill struct {
	done chan struct{}
	err  error // set before done is closed
}

// DefaultQueuedMax is the most numbers a key's queue holds when
// QueuedOptions.Max is zero.
const DefaultQueuedMax = 1 << 16

// NewQueued returns a Queued in front of gen.
func NewQueued(gen Gen, opts QueuedOptions) (*Queued, error) {
	if gen == nil {
		return nil, fmt.Errorf("%w: NewQueued with a nil Gen", ErrInvalidArgument)
	}
	if opts.Lead < 0 || opts.Min < 0 || opts.Max < 0 || opts.FillTimeout < 0 {
		return nil, fmt.Errorf("%w: NewQueued: negative Lead (%v), Min (%d), Max (%d) or FillTimeout (%v)", ErrInvalidArgument, opts.Lead, opts.Min, opts.Max, opts.FillTimeout)
	}
	if opts.FillTimeout == 0 {
		opts.FillTimeout = DefaultFetchTimeout
	}
	if opts.Lead == 0 {
		opts.Lead = 50 * time.Millisecond
	}
	if opts.Min == 0 {
		opts.Min = 16
	}
	if opts.Max == 0 {
		opts.Max = DefaultQueuedMax
	}
	if opts.Min > opts.Max {
		return nil, fmt.Errorf("%w: NewQueued: Min %d is above Max %d", ErrInvalidArgument, opts.Min, opts.Max)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Idle == 0 {
		opts.Idle = 10 * time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	qd := &Queued{gen: gen, opts: opts, ctx: ctx, cancel: cancel, keys: make(map[string]*queue)}
	if opts.Idle > 0 {
		qd.fills.Add(1)
		go qd.sweeps()
	}
	return qd, nil
}

// sweeps drops, every Idle/2, the queues that were not used since the
// sweep before and have no refill in flight: a queue is dropped within
// Idle of its last use.
func (qd *Queued) sweeps() {
	defer qd.fills.Done()
	t := time.NewTicker(qd.opts.Idle / 2)
	defer t.Stop()
	for {
		select {
		case <-qd.ctx.Done():
			return
		case <-t.C:
		}
		dropped := map[string][]int64{}
		qd.mu.Lock()
		for key, q := range qd.keys {
			q.mu.Lock()
			if !q.used && q.fill == nil {
				q.released = true
				delete(qd.keys, key)
				dropped[key] = slices.Clone(q.buf[q.head:])
			}
			q.used = false
			q.mu.Unlock()
		}
		qd.mu.Unlock()
		for key, ns := range dropped {
			_ = qd.release(key, ns, "queued, and dropped when the key was idle")
		}
	}
}

// release notes in the journal of the Gen's store, when it keeps one,
// that the numbers ns of key (increasing), drawn into its queue, were
// never issued: the Gen gave them out, and would otherwise count them
// issued.
func (qd *Queued) release(key string, ns []int64, reason string) error {
	j := journal.Of(qd.gen)
	if j == nil || len(ns) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), qd.opts.FillTimeout)
	defer cancel()
	var errs []error
	for i := 0; i < len(ns); {
		r := Range{First: ns[i], Last: ns[i]}
		for i++; i < len(ns) && ns[i] == r.Last+1; i++ {
			r.Last = ns[i]
		}
		_, err := j.Note(ctx, key, journal.Event{Kind: journal.Released, Range: r, Reason: reason})
		if errors.Is(err, errors.ErrUnsupported) {
			return nil // the store beneath keeps no journal after all
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sequence: Queued: noting %v of key %q unused: %w", r, key, err))
		}
	}
	return errors.Join(errs...)
}

// Journal returns the journals of the Gen's store (see [journal.Holder]),
// or nil when it keeps none. A void noted there of numbers still in a
// queue, or being drawn into one, is refused with an error wrapping
// [ErrInvalidArgument]: they would be issued later, void. While a void
// is checked and noted, the Queued's draws wait.
func (qd *Queued) Journal() journal.Keeper {
	j := journal.Of(qd.gen)
	if j == nil {
		return nil
	}
	return holding{j, qd}
}

// drawing returns the lock the Queued's draws hold read (see holder).
func (qd *Queued) drawing(string) *sync.RWMutex { return &qd.draws }

// unissued returns the numbers of r still in key's queue, if any.
func (qd *Queued) unissued(key string, r Range) (Range, bool) {
	qd.mu.Lock()
	q := qd.keys[key]
	qd.mu.Unlock()
	if q == nil {
		return Range{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	ns := q.buf[q.head:]
	i, _ := slices.BinarySearch(ns, r.First)
	if i == len(ns) || ns[i] > r.Last {
		return Range{}, false
	}
	out := Range{First: ns[i], Last: ns[i]}
	for i++; i < len(ns) && ns[i] == out.Last+1 && ns[i] <= r.Last; i++ {
		out.Last = ns[i]
	}
	return out, true
}

// queue returns key's queue, adding it if there is none.
func (qd *Queued) queue(key string) *queue {
	qd.mu.Lock()
	defer qd.mu.Unlock()
	q := qd.keys[key]
	if q == nil {
		q = &queue{target: qd.opts.Min, since: qd.opts.Now()}
		qd.keys[key] = q
	}
	return q
}

// Next returns the next queued number for key. It waits only when the
// queue is empty: for a key's first number, and when demand outgrew the
// queue faster than a refill could follow.
func (qd *Queued) Next(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if qd.closed.Load() {
		return 0, fmt.Errorf("%w: Queued", ErrClosed)
	}
	q := qd.queue(key)
	for {
		q.mu.Lock()
		if q.released {
			q.mu.Unlock()
			q = qd.queue(key)
			continue
		}
		q.used = true
		if q.head < len(q.buf) {
			n := q.buf[q.head]
			q.head++
			q.taken++
			if len(q.buf)-q.head <= q.target/2 && q.fill == nil {
				qd.startFill(q, key)
			}
			q.mu.Unlock()
			return n, nil
		}
		f := q.fill
		if f == nil {
			f = qd.startFill(q, key)
		}
		q.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if f.err != nil {
			q.mu.Lock()
			empty := q.head >= len(q.buf)
			q.mu.Unlock()
			if empty {
				return 0, f.err
			}
		}
	}
}

// startFill starts a refill of q; q.mu is held.
func (qd *Queued) startFill(q *queue, key string) *fill {
	if qd.closed.Load() {
		f := &fill{done: make(chan struct{}), err: fmt.Errorf("%w: Queued", ErrClosed)}
		close(f.done)
		return f
	}
	qd.measure(q)
	f := &fill{done: make(chan struct{})}
	q.fill = f
	want := max(1, q.target-(len(q.buf)-q.head))
	qd.fills.Add(1)
	go qd.run(q, key, f, want)
	return f
}

// measure updates q's rates and target from the numbers taken since the
// last refill; q.mu is held.
func (qd *Queued) measure(q *queue) {
	now := qd.opts.Now()
	if d := now.Sub(q.since).Seconds(); d > 0 {
		rate := float64(q.taken) / d
		q.recent = (q.recent + rate) / 2
		q.longTerm = 0.9*q.longTerm + 0.1*rate
	}
	q.taken, q.since = 0, now
	want := math.Ceil(max(q.recent, q.longTerm) * qd.opts.Lead.Seconds())
	q.target = int(min(max(want, float64(qd.opts.Min)), float64(qd.opts.Max)))
}

// run draws want numbers for key and appends them to q, within
// FillTimeout: a draw that takes longer fails the fill, and what it
// returns late is queued all the same.
func (qd *Queued) run(q *queue, key string, f *fill, want int) {
	defer qd.fills.Done()
	ctx, cancel := context.WithTimeout(qd.ctx, qd.opts.FillTimeout)
	type result struct {
		got []int64
		err error
	}
	res := make(chan result, 1)
	// From the draw until its numbers are queued, no void is checked:
	// it would not see them (see holding). The read lock is released
	// where they are queued.
	qd.draws.RLock()
	go func() {
		defer cancel()
		got, err := qd.draw(ctx, key, want)
		res <- result{got, err}
	}()
	t := time.NewTimer(qd.opts.FillTimeout + qd.opts.FillTimeout/10)
	defer t.Stop()
	select {
	case r := <-res:
		qd.add(q, key, f, r.got, r.err)
		qd.draws.RUnlock()
	case <-t.C:
		// The Gen did not return, even cancelled: the fill fails, and
		// the next caller starts another.
		qd.add(q, key, f, nil, fmt.Errorf("%w: the Gen did not return within %v (QueuedOptions.FillTimeout)", ErrUnavailable, qd.opts.FillTimeout))
		go func() {
			r := <-res
			qd.add(q, key, nil, r.got, nil)
			qd.draws.RUnlock()
		}()
	}
}

// add queues the numbers got, and ends fill f (if not nil) with err.
func (qd *Queued) add(q *queue, key string, f *fill, got []int64, err error) {
	slices.Sort(got)
	q.mu.Lock()
	if q.head > 0 && q.head >= len(q.buf)/2 {
		q.buf = append(q.buf[:0], q.buf[q.head:]...)
		q.head = 0
	}
	for _, n := range got {
		// A number at or below the tail is one a Floor has passed, or
		// one a Gen returned out of order: a gap, never handed out
		// out of order.
		if n > q.tail {
			q.buf = append(q.buf, n)
			q.tail = n
		}
	}
	if f == nil {
		q.mu.Unlock()
		return
	}
	if err != nil {
		if !errors.Is(err, ErrUnavailable) && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		f.err = fmt.Errorf("sequence: Queued: refilling %q: %w", key, err)
	}
	if q.fill == f {
		q.fill = nil
	}
	q.mu.Unlock()
	close(f.done)
}

// draw takes want numbers for key from the Gen, in one batch if it is a
// [Batcher]. On error it returns the numbers drawn before it.
func (qd *Queued) draw(ctx context.Context, key string, want int) (got []int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the Gen panicked: %v", r)
		}
	}()
	got = make([]int64, 0, want)
	if b, ok := qd.gen.(Batcher); ok {
		return b.NextN(ctx, key, got, want)
	}
	for range want {
		n, err := qd.gen.Next(ctx, key)
		if err != nil {
			return got, err
		}
		got = append(got, n)
	}
	return got, nil
}

// Records returns the records of the Gen's store (see package record), or
// nil.
func (qd *Queued) Records() record.Store { return record.Of(qd.gen) }

// Floor raises key's floor in the Gen and drops the queued numbers at or
// below it. It returns an error wrapping errors.ErrUnsupported if the Gen
// is not a [Floorer].
func (qd *Queued) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("%w: Floor(%q, %d): a floor is not negative", ErrInvalidArgument, key, floor)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if qd.closed.Load() {
		return fmt.Errorf("%w: Queued", ErrClosed)
	}
	f, ok := qd.gen.(Floorer)
	if !ok {
		return fmt.Errorf("%w: Floor: the Gen (%T) cannot take a floor", errors.ErrUnsupported, qd.gen)
	}
	if err := f.Floor(ctx, key, floor); err != nil {
		return err
	}
	q := qd.queue(key)
	q.mu.Lock()
	// A queue dropped meanwhile holds nothing a later call can take.
	from := q.head
	for q.head < len(q.buf) && q.buf[q.head] <= floor {
		q.head++
	}
	dropped := slices.Clone(q.buf[from:q.head])
	q.tail = max(q.tail, floor)
	q.mu.Unlock()
	return qd.release(key, dropped, "queued, and passed over by a floor")
}

// Close stops the refills and waits for them. Queued numbers are dropped,
// and noted unused in the journal of the Gen's store, when it keeps one;
// every later call returns an error wrapping [ErrClosed]. It does not
// close the Gen. Closing twice returns ErrClosed.
func (qd *Queued) Close() error {
	if qd.closed.Swap(true) {
		return fmt.Errorf("%w: Queued closed twice", ErrClosed)
	}
	qd.cancel()
	qd.fills.Wait()
	dropped := map[string][]int64{}
	qd.mu.Lock()
	for key, q := range qd.keys {
		q.mu.Lock()
		dropped[key] = slices.Clone(q.buf[q.head:])
		q.head = len(q.buf)
		q.mu.Unlock()
	}
	qd.mu.Unlock()
	var errs []error
	for key, ns := range dropped {
		errs = append(errs, qd.release(key, ns, "queued, and dropped when the Queued closed"))
	}
	return errors.Join(errs...)
}
