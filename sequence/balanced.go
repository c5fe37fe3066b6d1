package sequence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Balanced spreads one series over 2^n Gens, so that numbers keep coming
// while some of them fail: JD's bitwise load-balanced generator. The Gens
// are taken in turn; a number is the chosen Gen's value shifted left by n
// bits, with the Gen's index in the low n bits:
//
//	number = value<<n | index
//
// Two Gens can never produce the same number, because their low bits
// differ, and one Gen never produces the same value twice for a key: the
// numbers are unique by construction, whatever the Gens' stores are (two
// databases, two Redis servers, or the same store twice). They are not
// increasing: each Gen counts on its own, so check a Balanced with
// [sequencetest.RunUnordered].
//
// A Gen's place is part of every number it gives, so another process with
// the Gens in another order would issue the numbers of this one. So each
// Gen whose store keeps records ([Remember]) records its place (its index
// and the number of Gens) there, and a Balanced issues its first number
// only once every Gen's place is recorded or found as recorded: a Balanced
// that finds another place issues nothing and returns an error wrapping
// [ErrInvalidArgument] that names both, and until every store has
// answered, calls fail with [ErrUnavailable] (a store that is down when a
// process starts delays its first number; once started, a Balanced goes
// on while some Gens fail). Records are kept for good: a process in
// another order that starts while the stores hold no places yet may
// record some of them before it is refused, and then both orders are
// refused until the records are cleared; nothing repeats. Two Gens over
// one store at two places are refused too. A Gen whose store keeps no
// records is not checked.
//
// A Gen whose call fails is taken out of the turn for
// [BalancedOptions.Rescue] and then tried again. A call fails over to the
// next Gen in turn, so a caller only sees an error when every Gen failed
// it; a Gen out of the turn is still tried when all the others have failed.
//
// Put a [Segment] in front of each store (or Balanced in front of
// Segments): Balanced adds availability, not speed.
//
// [sequencetest.RunUnordered]: https://pkg.go.dev/github.com/sngen/sn/sequence/sequencetest#RunUnordered
type Balanced struct {
	gens   []Gen
	shift  uint
	max    int64 // the largest value a Gen may return: math.MaxInt64 >> shift
	opts   BalancedOptions
	turn   atomic.Uint64
	out    []atomic.Int64 // per Gen: until when (unix nanoseconds) it is out of the turn; 0 when in
	nout   atomic.Int32   // how many Gens are out, so that the clock is read only then
	closed atomic.Bool

	placed    []atomic.Bool         // per Gen: its place is recorded in its store, or it keeps no records
	allPlaced atomic.Bool           // every Gen is placed: numbers may be issued
	refused   atomic.Pointer[error] // set when a store records another place: every call fails
}

// BalancedOptions configure a [Balanced]. The zero value is ready to use.
type BalancedOptions struct {
	// Rescue is how long a Gen that failed stays out of the turn. Zero
	// means 30 seconds.
	Rescue time.Duration
	// Timeout bounds each call to a Gen: a call that takes longer is
	// cancelled and counts as a failure. Zero means no bound but the
	// caller's context.
	Timeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives a warning when a Gen is taken out of the turn; nil
	// means slog.Default().
	Logger *slog.Logger
}

// MaxBalanced is the most Gens a Balanced takes: 2^16, which leaves 47
// bits of value.
const MaxBalanced = 1 << 16

// NewBalanced returns a Balanced over gens, whose number must be a power
// of two from 2 to 65,536. A Gen may appear more than once.
func NewBalanced(gens []Gen, opts BalancedOptions) (*Balanced, error) {
	n := len(gens)
	if n < 2 || n > MaxBalanced || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: NewBalanced with %d Gens; want a power of two from 2 to %d (the index takes the low bits of each number)", ErrInvalidArgument, n, MaxBalanced)
	}
	for i, g := range gens {
		if g == nil {
			return nil, fmt.Errorf("%w: NewBalanced: Gen %d is nil", ErrInvalidArgument, i)
		}
	}
	if opts.Rescue < 0 || opts.Timeout < 0 {
		return nil, fmt.Errorf("%w: NewBalanced: negative Rescue (%v) or Timeout (%v)", ErrInvalidArgument, opts.Rescue, opts.Timeout)
	}
	if opts.Rescue == 0 {
		opts.Rescue = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	shift := uint(bits.TrailingZeros(uint(n)))
	return &Balanced{
		gens:   append([]Gen(nil), gens...),
		shift:  shift,
		max:    math.MaxInt64 >> shift,
		opts:   opts,
		out:    make([]atomic.Int64, n),
		placed: make([]atomic.Bool, n),
	}, nil
}

// placeAll places every Gen not placed yet, and reports the first that
// could not be: a refusal, or a store that does not answer.
func (b *Balanced) placeAll(ctx context.Context) error {
	var errs []error
	for i := range b.gens {
		if b.placed[i].Load() {
			continue
		}
		pctx := ctx
		if b.opts.Timeout > 0 {
			var cancel context.CancelFunc
			pctx, cancel = context.WithTimeout(ctx, b.opts.Timeout)
			defer cancel()
		}
		if err := b.place(pctx, i); err != nil {
			if r := b.refused.Load(); r != nil {
				return *r
			}
			errs = append(errs, fmt.Errorf("Gen %d: %w", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: Balanced: a Balanced issues its first number only once every Gen's place is recorded in its store, and %d did not answer: %w", ErrUnavailable, len(errs), errors.Join(errs...))
	}
	b.allPlaced.Store(true)
	return nil
}

// placeRecord is the name a Gen's place is recorded under in its store.
const placeRecord = "sequence.Balanced place"

// place records Gen i's place in its store, once, and refuses another.
func (b *Balanced) place(ctx context.Context, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Gen %d panicked recording its place: %v", i, r)
		}
	}()
	var at []string
	for j, g := range b.gens {
		if Same(g, b.gens[i]) {
			at = append(at, strconv.Itoa(j))
		}
	}
	want := fmt.Sprintf("Gen %s of %d", strings.Join(at, ","), len(b.gens))
	got, err := Remember(ctx, b.gens[i], placeRecord, want)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
	case err != nil:
		return fmt.Errorf("recording its place: %w", err)
	case got != want:
		refusal := fmt.Errorf("%w: Balanced: the store of Gen %d (%T) records its place as %q, and this Balanced has it as %q: "+
			"the low bits of a number name the Gen, so Gens in another order would issue one another's numbers; list the Gens in the recorded order, or give this Balanced stores of its own",
			ErrInvalidArgument, i, b.gens[i], got, want)
		b.refused.CompareAndSwap(nil, &refusal)
		return refusal
	}
	b.placed[i].Store(true)
	return nil
}

// Split returns the index of the Gen that issued number and the value that
// Gen returned.
func (b *Balanced) Split(number int64) (index int, value int64) {
	return int(number & (1<<b.shift - 1)), number >> b.shift
}

// Next returns a number for key from the next Gen in turn, failing over to
// the others. When every Gen fails, the error wraps [ErrUnavailable] and
// each Gen's error.
func (b *Balanced) Next(ctx context.Context, key string) (int64, error) {
	var n int64
	err := b.each(ctx, func(ctx context.Context, i int) error {
		v, err := b.gens[i].Next(ctx, key)
		if err != nil {
			return err
		}
		n, err = b.number(i, v)
		return err
	})
	return n, err
}

// NextN appends n numbers for key to dst, taking them from the Gens in
// turn as Next does: from one Gen while it succeeds.
func (b *Balanced) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN(%q) with n=%d", ErrInvalidArgument, key, n)
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	if n == 0 {
		return dst, nil
	}
	want := n
	err := b.each(ctx, func(ctx context.Context, i int) error {
		// Gen i's values are collected apart from dst (in its spare
		// room) and reach dst only once shifted: a Gen that panics
		// half-way leaves dst as it was, never holding raw values that
		// another Gen's numbers could equal.
		got := dst[len(dst):]
		var err error
		if bg, ok := b.gens[i].(Batcher); ok {
			got, err = bg.NextN(ctx, key, got, want)
		} else {
			for range want {
				var v int64
				if v, err = b.gens[i].Next(ctx, key); err != nil {
					break
				}
				got = append(got, v)
			}
		}
		// Numbers a Gen issued before failing are kept: they are
		// consumed, and unique.
		for j := range got {
			v, verr := b.number(i, got[j])
			if verr != nil {
				got, err = got[:j], verr
				break
			}
			got[j] = v
		}
		got = got[:min(len(got), want)]
		dst = append(dst, got...)
		want -= len(got)
		if err == nil && want > 0 {
			err = fmt.Errorf("%w: NextN returned %d numbers too few", ErrUnavailable, want)
		}
		return err
	})
	return dst, err
}

// number joins Gen i's value v into a number.
func (b *Balanced) number(i int, v int64) (int64, error) {
	switch {
	case v < 1:
		return 0, fmt.Errorf("Gen %d returned %d; numbers are positive", i, v)
	case v > b.max:
		return 0, fmt.Errorf("%w: Gen %d returned %d, above the %d that fit beside a %d-bit index", ErrExhausted, i, v, b.max, b.shift)
	}
	return v<<b.shift | int64(i), nil
}

// each calls try with the Gens in turn until one succeeds: first those in
// the turn, then those out of it. A failure takes the Gen out of the turn.
func (b *Balanced) each(ctx context.Context, try func(ctx context.Context, i int) error) error {
	if b.closed.Load() {
		return fmt.Errorf("%w: Balanced", ErrClosed)
	}
	if r := b.refused.Load(); r != nil {
		return *r
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !b.allPlaced.Load() {
		if err := b.placeAll(ctx); err != nil {
			return err
		}
	}
	n := len(b.gens)
	first := int(b.turn.Add(1) % uint64(n))
	var now int64
	if b.nout.Load() > 0 {
		now = b.opts.Now().UnixNano()
	}
	var errs []error
	tried := 0
	for pass := range 2 {
		for k := range n {
			i := (first + k) % n
			until := b.out[i].Load()
			if out := until != 0 && now < until; out != (pass == 1) {
				continue // the first pass takes the Gens in the turn, the second the others
			}
			err := b.call(ctx, i, try)
			if r := b.refused.Load(); r != nil {
				return *r
			}
			if err == nil {
				if until != 0 && b.out[i].CompareAndSwap(until, 0) {
					b.nout.Add(-1)
				}
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("sequence: Balanced: %w", errors.Join(ctx.Err(), err))
			}
			tried++
			errs = append(errs, fmt.Errorf("Gen %d: %w", i, err))
			b.takeOut(i, until, err)
		}
	}
	return fmt.Errorf("%w: all %d Gens of a Balanced failed: %w", ErrUnavailable, tried, errors.Join(errs...))
}

// call runs try on Gen i under the Timeout, turning a panic into an error.
func (b *Balanced) call(ctx context.Context, i int, try func(ctx context.Context, i int) error) (err error) {
	if b.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.opts.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Gen %d panicked: %v", i, r)
		}
	}()
	return try(ctx, i)
}

// takeOut takes Gen i out of the turn for Rescue, unless another caller
// changed its state since until was read.
func (b *Balanced) takeOut(i int, until int64, err error) {
	next := b.opts.Now().Add(b.opts.Rescue).UnixNano()
	if !b.out[i].CompareAndSwap(until, next) {
		return
	}
	if until == 0 {
		b.nout.Add(1)
		b.opts.Logger.Warn("sequence: Balanced: a Gen failed; it is out of the turn", "index", i, "rescue", b.opts.Rescue, "err", err)
	}
}

// Floor raises key's floor on every Gen, so that every later number is
// above floor. It returns an error wrapping errors.ErrUnsupported if a Gen
// is not a [Floorer], and the first Gen's error if one fails; a Floor that
// failed must be repeated before its promise holds.
func (b *Balanced) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("%w: Floor(%q, %d): a floor is not negative", ErrInvalidArgument, key, floor)
	}
	if b.closed.Load() {
		return fmt.Errorf("%w: Balanced", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// value > floor>>shift gives value<<shift >= (floor>>shift + 1)<<shift > floor.
	for i, g := range b.gens {
		f, ok := g.(Floorer)
		if !ok {
			return fmt.Errorf("%w: Floor: Gen %d (%T) cannot take a floor", errors.ErrUnsupported, i, g)
		}
		if err := f.Floor(ctx, key, floor>>b.shift); err != nil {
			return fmt.Errorf("sequence: Balanced: Floor on Gen %d: %w", i, err)
		}
	}
	return nil
}

// Close makes every later call return an error wrapping [ErrClosed]. It
// does not close the Gens. Closing twice returns ErrClosed.
func (b *Balanced) Close() error {
	if b.closed.Swap(true) {
		return fmt.Errorf("%w: Balanced closed twice", ErrClosed)
	}
	return nil
}
