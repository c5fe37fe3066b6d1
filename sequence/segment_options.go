package sequence

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// SegmentOptions configures a [Segment]. The zero value is ready to use: every
// zero field takes the default given in its comment.
//
// [NewSegment] never fails: it replaces an invalid value (a negative number,
// MinStep above MaxStep, Prefetch outside (0, 1)) as described on each field.
// A configuration layer that wants to report such values to a user calls
// [SegmentOptions.Validate] first.
type SegmentOptions struct {
	// Step is the size of the first block fetched for a key.
	// default: 1000. Clamped into [MinStep, MaxStep].
	Step int64

	// MinStep is the smallest block the step may shrink to.
	// default: Step. A value above MaxStep is lowered to MaxStep.
	MinStep int64

	// MaxStep is the largest block the step may grow to.
	// default: max(Step, 1_000_000).
	MaxStep int64

	// Prefetch is the share of the current block that is used before the next
	// block is fetched in the background. It must lie in (0, 1): 0.2 means the
	// fetch starts once a fifth of the block is gone, leaving four fifths of
	// it to cover the fetch.
	// default: 0.2; a value outside (0, 1) is replaced by the default.
	Prefetch float64

	// Target is how long one block should last. When a key's blocks are
	// fetched less than Target apart, its step doubles; when they are fetched
	// more than 4*Target apart, it halves; it never leaves [MinStep, MaxStep].
	// default: 1 minute; a negative value is replaced by the default.
	Target time.Duration

	// FetchTimeout is the deadline of each background call to the
	// Allocator.
	// default: 5 seconds; a negative value is replaced by the default.
	FetchTimeout time.Duration

	// Idle is how long a key may go unused before the Segment releases its
	// state: the numbers left in its blocks are a gap, and its next call
	// fetches a new block from the Allocator. A Segment checks its keys
	// every Idle/4 and releases a key after four checks in a row found it
	// unused, so within 1.25*Idle. Keys bound to a Handle are never
	// released.
	// default: 10 minutes; a negative value keeps every key until Close.
	Idle time.Duration

	// Logger receives the Segment's warnings: a fixed step (MinStep ==
	// MaxStep) too small for the rate, so that callers wait for a block at
	// every block (see [SegmentStats].Late), at most every 10 seconds.
	// default: slog.Default().
	Logger *slog.Logger

	// Now returns the current time. Tests set it to drive step adaptation
	// and retry backoff with a fake clock.
	// default: time.Now.
	Now func() time.Time
}

// DefaultFetchTimeout bounds each call to a store when
// SegmentOptions.FetchTimeout is zero, and each refill of a Queued when
// QueuedOptions.FillTimeout is.
const DefaultFetchTimeout = 5 * time.Second

// Defaults of SegmentOptions, as documented on its fields.
const (
	defaultStep         = 1000
	defaultMaxStep      = 1_000_000
	defaultPrefetch     = 0.2
	defaultTarget       = time.Minute
	defaultFetchTimeout = DefaultFetchTimeout
	defaultIdle         = 10 * time.Minute
)

// An OptionError is a field of an options struct out of range, as
// [SegmentOptions.Validate] reports it: a program that reads the options
// from elsewhere (package config, from a file) names the field its own
// way and keeps the rule. It wraps [ErrInvalidArgument].
type OptionError struct {
	// Field is the field's Go name, such as "MinStep".
	Field string
	// Value is the field's value.
	Value any
	// Want says what the field takes; another field it is compared with
	// is named by its Go name and followed by its value: "at most
	// MaxStep, 10".
	Want string
}

// Error says which field is wrong and what it takes.
func (e *OptionError) Error() string {
	return fmt.Sprintf("%v: SegmentOptions.%s is %v, want %s", ErrInvalidArgument, e.Field, e.Value, e.Want)
}

// Unwrap returns [ErrInvalidArgument].
func (e *OptionError) Unwrap() error { return ErrInvalidArgument }

// Validate reports every field of o that [NewSegment] refuses, each an
// *[OptionError], joined. Zero fields are valid: they take the defaults.
func (o SegmentOptions) Validate() error {
	var errs []error
	bad := func(field string, value any, want string, args ...any) {
		errs = append(errs, &OptionError{Field: field, Value: value, Want: fmt.Sprintf(want, args...)})
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"Step", o.Step}, {"MinStep", o.MinStep}, {"MaxStep", o.MaxStep}} {
		if f.v < 0 {
			bad(f.name, f.v, "1 or more (or 0 for the default)")
		}
	}
	if o.MinStep > 0 && o.MaxStep > 0 && o.MinStep > o.MaxStep {
		bad("MinStep", o.MinStep, "at most MaxStep, %d", o.MaxStep)
	}
	if o.Step > 0 && o.MinStep > 0 && o.Step < o.MinStep {
		bad("Step", o.Step, "at least MinStep, %d", o.MinStep)
	}
	if o.Step > 0 && o.MaxStep > 0 && o.Step > o.MaxStep {
		bad("Step", o.Step, "at most MaxStep, %d", o.MaxStep)
	}
	if o.Prefetch != 0 && !(o.Prefetch > 0 && o.Prefetch < 1) { // also catches NaN
		bad("Prefetch", o.Prefetch, "a share between 0 and 1, such as 0.2")
	}
	if o.Target < 0 {
		bad("Target", o.Target, "a positive duration (or 0 for the default)")
	}
	if o.FetchTimeout < 0 {
		bad("FetchTimeout", o.FetchTimeout, "a positive duration (or 0 for the default)")
	}
	return errors.Join(errs...)
}

// withDefaults returns o with defaults in place of zero or invalid values,
// as documented on each field.
func (o SegmentOptions) withDefaults() SegmentOptions {
	if o.Step <= 0 {
		o.Step = defaultStep
	}
	if o.MaxStep <= 0 {
		o.MaxStep = max(o.Step, defaultMaxStep)
	}
	if o.MinStep <= 0 {
		o.MinStep = min(o.Step, o.MaxStep)
	}
	o.MinStep = min(o.MinStep, o.MaxStep)
	o.Step = min(max(o.Step, o.MinStep), o.MaxStep)
	if !(o.Prefetch > 0 && o.Prefetch < 1) {
		o.Prefetch = defaultPrefetch
	}
	if o.Target <= 0 {
		o.Target = defaultTarget
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = defaultFetchTimeout
	}
	if o.Idle == 0 {
		o.Idle = defaultIdle
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// threshold returns how many numbers of a block of size n are used before
// the next block is fetched: at least 1, at most n.
func (o SegmentOptions) threshold(n int64) int64 {
	t := math.Ceil(float64(n) * o.Prefetch)
	if t >= float64(n) { // also keeps huge n from overflowing the conversion
		return n
	}
	return max(int64(t), 1)
}
