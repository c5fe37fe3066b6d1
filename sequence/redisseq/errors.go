package redisseq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

var (
	// ErrWrongType means a Redis key this package uses holds a value of
	// another type (a hash where a string belongs, say): something else
	// writes to it. Nothing was changed. Give this package a prefix of its
	// own ([AllocatorOptions.Prefix], [CounterOptions.Prefix]).
	ErrWrongType = errors.New("redisseq: key holds a foreign value of the wrong type")

	// ErrCorrupt means a Redis key this package uses holds a value it never
	// writes (a string that is not an integer, a negative counter, a range
	// field that is not a decimal integer). No number is issued from it.
	ErrCorrupt = errors.New("redisseq: key holds a corrupt value")

	// ErrOtherLedger means the range of a key in Redis was reserved from
	// another ledger than the caller's durable allocator (by
	// its StoreID): two machines use one Redis with two ledgers
	// (two databases, two tables, a bbolt file each). Each ledger would
	// hand out again what the other issued once Redis loses its data, so
	// no number is issued. Give every machine the same ledger.
	ErrOtherLedger = errors.New("redisseq: range reserved from another ledger")

	// ErrNotHeld is returned by [Lock.Unlock] and [Lock.Refresh] when the lock
	// is not held by that Lock: it expired, and maybe someone else holds it
	// now.
	ErrNotHeld = errors.New("redisseq: lock not held")
)

// keyError is an error about one Redis key. Its message is complete on its
// own; errors.Is sees both the kind (a sentinel) and the cause.
type keyError struct {
	msg  string
	errs []error
}

func (e *keyError) Error() string   { return e.msg }
func (e *keyError) Unwrap() []error { return e.errs }

// newError returns an error with message "redisseq: " + the formatted text
// that wraps kind (if not nil) and cause (if not nil).
func newError(kind, cause error, format string, args ...any) error {
	e := &keyError{msg: "redisseq: " + fmt.Sprintf(format, args...)}
	if kind != nil {
		e.errs = append(e.errs, kind)
	}
	if cause != nil {
		e.errs = append(e.errs, cause)
	}
	return e
}

// classify turns an error from a Redis call made by op on key into the error
// this package returns. It is the one place that reads Redis error replies:
//
//   - a cancelled context: wraps the context's error only;
//   - no answer (refused or dropped connection, i/o timeout, deadline,
//     pool timeout, cluster reconfiguration, loading, out of memory, busy
//     script), or too few replicas acknowledged a write in time: wraps
//     [sequence.ErrUnavailable];
//   - WRONGTYPE: wraps [ErrWrongType];
//   - a value that is not an integer, or our scripts' CORRUPT reply: wraps
//     [ErrCorrupt];
//   - an increment past math.MaxInt64: wraps [sequence.ErrExhausted];
//   - a closed client: wraps [sequence.ErrClosed].
//
// Every result also wraps err itself. NOSCRIPT never gets here: Script.Run
// falls back to EVAL. Nor does a script's LEDGER reply, a range from another
// ledger: Counter.otherLedger reads it first, for it knows the process's
// own ledger, which the message names.
func classify(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var rerr redis.Error
	var short notReplicated
	switch {
	case errors.As(err, &short):
		return newError(sequence.ErrUnavailable, err, "%s key %s: %v", op, key, err)
	case errors.Is(err, context.Canceled):
		return newError(nil, err, "%s key %s: %v", op, key, err)
	case errors.Is(err, redis.ErrClosed):
		return newError(sequence.ErrClosed, err, "%s key %s: the Redis client is closed", op, key)
	case errors.Is(err, context.DeadlineExceeded):
		return newError(sequence.ErrUnavailable, err, "%s key %s: Redis did not answer in time: %v", op, key, err)
	case !errors.As(err, &rerr) && !errors.Is(err, redis.ErrPoolTimeout):
		// Not a reply from a server: the connection failed.
		return newError(sequence.ErrUnavailable, err, "%s key %s: Redis unreachable: %v", op, key, err)
	}
	msg := strings.TrimPrefix(err.Error(), "ERR ")
	switch {
	case errors.Is(err, redis.ErrPoolTimeout):
		return newError(sequence.ErrUnavailable, err, "%s key %s: Redis unreachable: %v", op, key, err)
	case strings.HasPrefix(msg, "WRONGTYPE"):
		return newError(ErrWrongType, err, "key %s holds a foreign value of the wrong type", key)
	case strings.HasPrefix(msg, corruptCode), strings.Contains(msg, "not an integer"):
		return newError(ErrCorrupt, err, "key %s holds a corrupt value: %s", key, trimScript(msg))
	case strings.Contains(msg, "increment or decrement would overflow"):
		return newError(sequence.ErrExhausted, err, "key %s: %s would pass %d", key, op, int64(1<<63-1))
	case isTransient(msg):
		return newError(sequence.ErrUnavailable, err, "%s key %s: Redis unavailable: %s", op, key, trimScript(msg))
	}
	return newError(nil, err, "%s key %s: %s", op, key, trimScript(msg))
}

// transientCodes are error codes of replies that mean "not now": the
// cluster is moving or down, the server is loading, out of memory, busy
// with a script, or a replica.
var transientCodes = []string{
	"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN",
	"READONLY", "BUSY", "OOM", "NOREPLICAS", "max number of clients",
}

func isTransient(msg string) bool {
	for _, c := range transientCodes {
		if strings.HasPrefix(msg, c) {
			return true
		}
	}
	return false
}

// corruptCode starts the error replies of this package's scripts that find
// a value they never write.
const corruptCode = "CORRUPT "

// trimScript drops the " script: <sha>, on @user_script:N." that Redis 7
// appends to errors raised inside a script.
func trimScript(msg string) string {
	if i := strings.Index(msg, " script: "); i >= 0 {
		return msg[:i]
	}
	return msg
}
