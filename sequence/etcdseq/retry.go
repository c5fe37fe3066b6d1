package etcdseq

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sngen/sn/sequence"
)

// retry calls attempt, with a context that ends after AttemptTimeout (or
// at the end of Timeout, if sooner), until it returns neither an error nor
// again. It tries again after an error that says etcd did not answer (a
// member down, no leader, an election, the attempt's deadline) and after
// again (a transaction that lost a race with another process's), with a
// short random pause, until Timeout has passed since the call began: then
// it returns an error wrapping [sequence.ErrUnavailable] that says which.
// It returns the error of the caller's context when that ends first, and
// any other error at once.
func (s *Store) retry(ctx context.Context, op, key string, attempt func(ctx context.Context) (again bool, err error)) error {
	deadline := time.Now().Add(s.opts.Timeout)
	var last error
	races := 0
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return s.wrap(op, key, errors.Join(err, last))
		}
		// An attempt gets AttemptTimeout, and no more than what is left
		// of Timeout.
		end := time.Now().Add(s.opts.AttemptTimeout)
		if deadline.Before(end) {
			end = deadline
		}
		actx, cancel := context.WithDeadline(ctx, end)
		again, err := attempt(actx)
		// An attempt cut by its own deadline is etcd not answering in
		// time, whatever the error says: a member may pass the deadline on
		// as an error of code Unknown.
		timedOut := actx.Err() != nil
		cancel()
		switch {
		case err == nil && !again:
			return nil
		case err != nil && ctx.Err() != nil:
			return s.wrap(op, key, errors.Join(ctx.Err(), err))
		case err != nil && !timedOut && !transient(err):
			return s.wrap(op, key, err)
		}
		if err != nil {
			last = err
		} else {
			races++
		}
		if !time.Now().Before(deadline) {
			if last == nil || races > try/2 {
				return s.wrap(op, key, fmt.Errorf("%w: %d of %d attempts within %v (Options.Timeout) lost a race with other processes changing the same key", sequence.ErrUnavailable, races, try+1, s.opts.Timeout))
			}
			return s.wrap(op, key, fmt.Errorf("%w: etcd did not answer within %v (Options.Timeout), %d attempts: %w", sequence.ErrUnavailable, s.opts.Timeout, try+1, last))
		}
		// A short random pause: processes that raced spread out, and a
		// cluster electing a leader gets the time to.
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(try, 7)))
		t := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// wrap adds what was asked to err, unless the Store made err itself.
func (s *Store) wrap(op, key string, err error) error {
	if errors.Is(err, sequence.ErrInvalidArgument) || errors.Is(err, sequence.ErrExhausted) || errors.Is(err, ErrCorrupt) {
		return err
	}
	if key == "" {
		return fmt.Errorf("etcdseq: %s: %w", op, err)
	}
	return fmt.Errorf("etcdseq: %s(%.80q): %w", op, key, err)
}

// transient reports whether a request that failed with err may succeed if
// tried again: etcd did not answer in time, has no leader, or the member
// asked is down.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sequence.ErrUnavailable) {
		return true
	}
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted:
		return true
	case codes.Unknown:
		// A member whose own deadline for the request (the client's,
		// passed on) ended first answers with the context's error as
		// code Unknown.
		return strings.Contains(status.Convert(err).Message(), context.DeadlineExceeded.Error())
	}
	return false
}
