package config

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// SegmentFields returns the fields of a sequence that [Serve] reads, by
// their names in a file, for a driver's StoreInfo.Fields.
func SegmentFields() []string {
	return []string{"step", "min_step", "max_step", "prefetch", "target", "fetch_timeout", "idle"}
}

// Serve turns a driver's Allocator into the Gen of template t: a
// sequence.Segment with the steps of t's sequence (step, min_step,
// max_step, prefetch, target, fetch_timeout, idle), or, under
// [WithExact], a Gen that reserves exactly what each call asks for, each
// call bounded by fetch_timeout. A Driver whose store is an Allocator
// returns it from Open.
func Serve(t *Target, a sequence.Allocator) (sequence.Gen, error) {
	if t.Exact {
		timeout := sequence.DefaultFetchTimeout
		if d, err := time.ParseDuration(t.Sequence.FetchTimeout); err == nil && d > 0 {
			timeout = d
		}
		return exact{a, timeout}, nil
	}
	opts, err := t.Sequence.SegmentOptions()
	if err != nil {
		return nil, err
	}
	return sequence.NewSegment(a, opts)
}

// exact is a Gen that reserves exactly what it is asked for from its
// Allocator, each call bounded by timeout; see [WithExact].
type exact struct {
	a       sequence.Allocator
	timeout time.Duration
}

// Next reserves one number.
func (e exact) Next(ctx context.Context, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(journal.WithDrawn(ctx, true), e.timeout)
	defer cancel()
	r, err := e.a.Allocate(ctx, key, 1)
	if err != nil {
		return 0, err
	}
	return r.First, nil
}

// NextN reserves n numbers in one call to the Allocator.
func (e exact) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN with n=%d", sequence.ErrInvalidArgument, n)
	}
	if n == 0 {
		return dst, nil
	}
	ctx, cancel := context.WithTimeout(journal.WithDrawn(ctx, true), e.timeout)
	defer cancel()
	r, err := e.a.Allocate(ctx, key, int64(n))
	if err != nil {
		return dst, err
	}
	for v := r.First; v <= r.Last && v > 0; v++ {
		dst = append(dst, v)
	}
	return dst, nil
}

// Floor raises the Allocator's floor, when it has one.
func (e exact) Floor(ctx context.Context, key string, floor int64) error {
	fl, ok := e.a.(sequence.Floorer)
	if !ok {
		return fmt.Errorf("config: %T is not a sequence.Floorer: %w", e.a, errors.ErrUnsupported)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return fl.Floor(ctx, key, floor)
}

// Records returns the records of the Allocator's store (see package
// record), where its catalog is kept.
func (e exact) Records() record.Store { return record.Of(e.a) }

// Journal returns the journals of the Allocator's store (see
// journal.Holder), or nil when it keeps none.
func (e exact) Journal() journal.Keeper { return journal.Of(e.a) }
