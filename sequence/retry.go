package sequence

import (
	"errors"
	"time"
)

// RetryAfter returns err with how long the condition it reports will last
// at least: a clock that is d behind the time a store or an earlier id
// needs. [RetryAfterOf] reads it back; sn serve sends it as Retry-After.
func RetryAfter(err error, d time.Duration) error {
	return &retryAfter{err, d}
}

type retryAfter struct {
	err error
	d   time.Duration
}

func (e *retryAfter) Error() string             { return e.err.Error() }
func (e *retryAfter) Unwrap() error             { return e.err }
func (e *retryAfter) RetryAfter() time.Duration { return e.d }

// RetryAfterOf returns how long the condition err reports will last, when
// an error in its chain says so with a method RetryAfter() time.Duration
// (see [RetryAfter]).
func RetryAfterOf(err error) (time.Duration, bool) {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		return r.RetryAfter(), true
	}
	return 0, false
}
