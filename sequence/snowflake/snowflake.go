// Package snowflake issues time-ordered int64 ids: the time, a worker id
// and a sequence within one time unit, in a [Layout] of your choosing.
//
// A Gen needs a worker id that no other live process uses. Give one by
// hand for a single process or a test ([Options.Worker]), or lease one
// from a store ([Options.Leaser], such as redisseq.NewLeaser or
// sqlseq.NewLeaser): the lease is renewed in the background, and a Gen
// that cannot renew stops issuing before its lease can expire and pass to
// another process.
//
// The clock is watched: a small step back is waited out, a larger one is
// an error wrapping [sequence.ErrClockRollback], never a repeated id. With
// a lease, the last instant the Gen may issue at is recorded in the store
// (the bound), so a process that restarts after the clock went back does
// not issue at instants already used. A Gen that leases an id whose bound
// the store does not know — an id never used, or a store that lost its
// data while another process still held the id — issues only after one
// TTL, by when any such holder has stopped; until then Next waits (within
// its context) and Ping reports sequence.ErrUnavailable. Leasers prefer
// an id a holder released, whose bound is known. A Leaser also records the
// layout of its series and refuses another ([ErrLayout]).
//
// Bounds are instants of the holders' own clocks, so the clocks of the
// processes that share a series must agree within TTL/2: after a store
// lost its data, a new holder of an id waits one TTL on its clock, and an
// old holder whose clock is ahead by more than TTL/2 may have issued in
// the instants the new one reaches.
package snowflake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/sngen/sn/sequence"
)

// Options configure a [Gen].
type Options struct {
	// Worker is the worker id when Leaser is nil: below the layout's
	// Workers. Two processes with one worker id issue the same ids, and a
	// process that restarts after the clock went back may issue an id
	// again: fixed ids are for one process, tests and tools.
	Worker int64

	// Leaser, when set, leases the worker id from a store.
	Leaser Leaser

	// TTL is how long a lease lasts unless renewed. It is renewed every
	// TTL/4, and the Gen stops issuing once TTL/2 has passed since the
	// start of its last successful renewal. A Gen whose id has no bound
	// in the store waits one TTL before its first id. Every Gen of one
	// series should have the same TTL. Zero means 10 seconds.
	TTL time.Duration

	// MaxWait is the longest clock step back that is waited out. The
	// clock going back further is an error wrapping
	// sequence.ErrClockRollback. Zero means 10 ms; it is never less than
	// one Unit.
	MaxWait time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Logger receives a warning when a renewal fails; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Gen issues snowflake ids. It implements sequence.Gen and
// sequence.Batcher; the key does not matter, for ids are unique across
// all keys. It is safe for concurrent use.
type Gen struct {
	l       Layout
	opts    Options
	worker  int64
	maxSeq  int64
	maxTick int64

	mu     sync.Mutex
	tick   int64 // the tick of the last id issued
	seq    int64 // the sequence of the last id in tick
	bound  int64 // with a lease: the last tick the store allows; math.MaxInt64 without
	start  int64 // with a lease: the last tick earlier holders may have issued in; -1 without
	valid  time.Time
	lease  Lease
	lost   error // set once the lease is lost for good
	closed bool

	stop chan struct{} // closed by Close: the renewals end
	done chan struct{} // closed when the renewals have ended
}

// New returns a Gen for layout l, which it validates, taking a worker id
// from opts.Leaser if set.
func New(ctx context.Context, l Layout, opts Options) (*Gen, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TTL == 0 {
		opts.TTL = 10 * time.Second
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = 10 * time.Millisecond
	}
	if opts.TTL < 0 || opts.MaxWait < 0 {
		return nil, fmt.Errorf("%w: snowflake: negative TTL (%v) or MaxWait (%v)", sequence.ErrInvalidArgument, opts.TTL, opts.MaxWait)
	}
	opts.MaxWait = max(opts.MaxWait, l.Unit)
	now := opts.Now()
	if err := l.Validate(now); err != nil {
		return nil, err
	}
	s := &Gen{l: l, opts: opts, maxSeq: 1<<l.SeqBits - 1, maxTick: l.maxTick(), tick: -1, start: -1, bound: math.MaxInt64}
	if opts.Leaser == nil {
		if opts.Worker < 0 || opts.Worker >= l.Workers() {
			return nil, fmt.Errorf("%w: snowflake: worker %d; the layout has %d bits of worker, so 0 to %d", sequence.ErrInvalidArgument, opts.Worker, l.WorkerBits, l.Workers()-1)
		}
		s.worker = opts.Worker
		return s, nil
	}
	lease, err := opts.Leaser.Lease(ctx, l, opts.TTL)
	if err != nil {
		return nil, fmt.Errorf("snowflake: leasing a worker id: %w", err)
	}
	s.lease, s.worker = lease, lease.Worker()
	start := lease.Bound()
	if start.IsZero() {
		// No bound: the id was never used, or the store lost what it
		// knew of it (flushed, restored from an older snapshot, failed
		// over to a replica that lagged, a key evicted), and a process
		// may still hold and use it. Such a holder stops issuing within
		// TTL/2 of its last renewal, which was before the loss; so
		// issue only after TTL from now.
		start = now.Add(opts.TTL)
	}
	// Earlier holders never issued after start: begin above its tick.
	s.start = l.tick(start)
	s.tick, s.seq = s.start, s.maxSeq
	if err := s.renew(ctx); err != nil {
		lease.Release(context.WithoutCancel(ctx), time.Time{})
		return nil, fmt.Errorf("snowflake: first renewal of worker %d: %w", s.worker, err)
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.renewals()
	return s, nil
}

// Layout returns the Gen's layout.
func (s *Gen) Layout() Layout { return s.l }

// Worker returns the Gen's worker id.
func (s *Gen) Worker() int64 { return s.worker }

// renew renews the lease, recording the bound the Gen will keep to until
// the next renewal: the instant TTL from now.
func (s *Gen) renew(ctx context.Context) error {
	start := s.opts.Now()
	bound := start.Add(s.opts.TTL)
	rctx, cancel := context.WithTimeout(ctx, s.opts.TTL/4)
	defer cancel()
	if err := s.lease.Renew(rctx, bound); err != nil {
		if errors.Is(err, sequence.ErrLeaseLost) {
			s.mu.Lock()
			s.lost = err
			s.mu.Unlock()
		}
		return err
	}
	s.mu.Lock()
	s.valid = start.Add(s.opts.TTL / 2)
	s.bound = s.l.tick(bound)
	s.mu.Unlock()
	return nil
}

// renewals renews the lease every TTL/4 until Close or the lease is lost.
func (s *Gen) renewals() {
	defer close(s.done)
	t := time.NewTicker(s.opts.TTL / 4)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.renew(context.Background()); err != nil {
			s.opts.Logger.Warn("snowflake: renewing the worker lease failed", "worker", s.worker, "err", err)
			if errors.Is(err, sequence.ErrLeaseLost) {
				return
			}
		}
	}
}

// Next returns a new id. key is ignored: ids are unique across keys.
func (s *Gen) Next(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tick, seq, err := s.take(ctx)
	if err != nil {
		return 0, err
	}
	return s.l.compose(tick, s.worker, seq), nil
}

// NextN appends n new ids to dst.
func (s *Gen) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN with n=%d", sequence.ErrInvalidArgument, n)
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		tick, seq, err := s.take(ctx)
		if err != nil {
			return dst, err
		}
		dst = append(dst, s.l.compose(tick, s.worker, seq))
	}
	return dst, nil
}

// take returns the tick and sequence of the next id; s.mu is held, and
// released while waiting for the clock.
func (s *Gen) take(ctx context.Context) (tick, seq int64, err error) {
	for {
		switch {
		case s.closed:
			return 0, 0, fmt.Errorf("%w: snowflake Gen", sequence.ErrClosed)
		case s.lost != nil:
			return 0, 0, fmt.Errorf("%w: worker %d: %w", sequence.ErrLeaseLost, s.worker, s.lost)
		}
		now := s.opts.Now()
		if s.lease != nil && !now.Before(s.valid) {
			return 0, 0, fmt.Errorf("%w: worker %d: not renewed since %v (TTL %v)", sequence.ErrLeaseLost, s.worker, s.valid.Add(-s.opts.TTL/2), s.opts.TTL)
		}
		t := s.l.tick(now)
		if t < 0 {
			return 0, 0, fmt.Errorf("%w: the clock (%v) is before the layout's epoch", sequence.ErrClockRollback, now.UTC())
		}
		if t <= s.start && s.tick == s.start {
			// Nothing issued yet: wait for the ticks of earlier holders
			// (or of a holder the store forgot) to pass. That is up to
			// TTL and the longest step back waited out; a clock
			// further behind is a clock set back.
			d := s.l.start(s.start + 1).Sub(now)
			if d > s.opts.TTL+s.opts.MaxWait {
				return 0, 0, sequence.RetryAfter(fmt.Errorf("%w: %v behind the bound its worker id's earlier holders recorded (%v)", sequence.ErrClockRollback, d, s.l.start(s.start+1).UTC()), d)
			}
			if err := s.wait(ctx, d); err != nil {
				return 0, 0, err
			}
			continue
		}
		if t < s.tick {
			if back := s.l.start(s.tick).Sub(now); back > s.opts.MaxWait {
				return 0, 0, sequence.RetryAfter(fmt.Errorf("%w: %v behind the last id issued (waits up to %v)", sequence.ErrClockRollback, back, s.opts.MaxWait), back)
			}
		}
		switch {
		case t > s.tick:
			if t > s.bound {
				return 0, 0, fmt.Errorf("%w: worker %d: the clock jumped past the bound its lease recorded (%v); the next renewal records a new one", sequence.ErrUnavailable, s.worker, s.l.start(s.bound+1).UTC())
			}
			if t > s.maxTick {
				return 0, 0, fmt.Errorf("%w: the layout ended at %v", sequence.ErrExhausted, s.l.End().UTC())
			}
			s.tick, s.seq = t, 0
			return s.tick, 0, nil
		case s.seq < s.maxSeq:
			s.seq++
			return s.tick, s.seq, nil
		}
		// Every sequence of s.tick is used: wait for the next unit.
		if err := s.wait(ctx, s.l.start(s.tick+1).Sub(now)); err != nil {
			return 0, 0, err
		}
	}
}

// wait releases s.mu for about d, and takes it again.
func (s *Gen) wait(ctx context.Context, d time.Duration) error {
	s.mu.Unlock()
	defer s.mu.Lock()
	if d > 2*time.Millisecond {
		// Sleep most of it; the rest is spun, so that the next unit
		// starts on time (timers are late by up to a millisecond).
		t := time.NewTimer(d - time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	runtime.Gosched()
	return nil
}

// Close stops the renewals and releases the lease, recording the exact
// bound: the end of the unit of the last id. Later calls return an error
// wrapping sequence.ErrClosed; closing twice returns ErrClosed.
func (s *Gen) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("%w: snowflake Gen closed twice", sequence.ErrClosed)
	}
	s.closed = true
	lost := s.lost
	last := s.tick
	s.mu.Unlock()
	if s.lease == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	if lost != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.TTL/2)
	defer cancel()
	bound := s.l.start(last + 1)
	if last < 0 {
		bound = time.Time{}
	}
	if err := s.lease.Release(ctx, bound); err != nil && !errors.Is(err, sequence.ErrLeaseLost) {
		return fmt.Errorf("snowflake: releasing worker %d: %w", s.worker, err)
	}
	return nil
}

// Ping reports whether the Gen issues: an error wrapping
// sequence.ErrUnavailable when its lease is lost or not renewed in time,
// and sequence.ErrClosed after Close.
func (s *Gen) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("%w: snowflake Gen", sequence.ErrClosed)
	case s.lost != nil:
		return fmt.Errorf("%w: worker %d: %w", sequence.ErrUnavailable, s.worker, s.lost)
	case s.lease != nil && !s.opts.Now().Before(s.valid):
		return fmt.Errorf("%w: worker %d: %w: not renewed since %v", sequence.ErrUnavailable, s.worker, sequence.ErrLeaseLost, s.valid.Add(-s.opts.TTL/2))
	case s.tick == s.start && s.l.tick(s.opts.Now()) <= s.start:
		return fmt.Errorf("%w: worker %d issues from %v on, after the instants its earlier holders may have issued at", sequence.ErrUnavailable, s.worker, s.l.start(s.start+1).UTC())
	}
	return nil
}

// LeaseInfo describes a Gen's hold on its worker id, for metrics and
// monitors.
type LeaseInfo struct {
	Worker int64     // the worker id
	Leased bool      // whether the id is leased from a Leaser, not given by hand
	Valid  time.Time // with a lease, until when the Gen issues without another renewal
	Err    error     // nil while the Gen issues; otherwise as from Ping
}

// LeaseInfo returns the Gen's hold on its worker id.
func (s *Gen) LeaseInfo() LeaseInfo {
	err := s.Ping(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	return LeaseInfo{Worker: s.worker, Leased: s.lease != nil, Valid: s.valid, Err: err}
}
