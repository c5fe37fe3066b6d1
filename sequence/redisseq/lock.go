package redisseq

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// DefaultLockTTL is the lifetime of a [Lock] when NewLock is given none.
const DefaultLockTTL = 10 * time.Second

// Lock is a distributed mutual-exclusion lock held in one Redis key: taking
// it is SET key token NX PX ttl, releasing it deletes the key only if it
// still holds this Lock's token, so a Lock can never release a lock someone
// else took after its own expired.
//
// Each Lock is one contender with its own random token; two Locks on the
// same key exclude each other, but goroutines sharing one Lock share its
// ownership. A Lock is not reentrant: TryLock on a held Lock returns false.
//
// The lock expires ttl after it was taken or last refreshed, so a crashed
// holder cannot block others forever. The price is that a holder paused for
// longer than ttl (a GC pause, a slow call) may find that someone else took
// the lock meanwhile: mutual exclusion is a best effort, and the work a Lock
// protects must stay correct without it. [Counter] uses a Lock only to avoid
// wasting ranges; its numbers stay unique without it.
//
// A Lock's methods are safe for concurrent use.
type Lock struct {
	rdb   redis.UniversalClient
	key   string
	ttl   time.Duration
	token string
	held  atomic.Bool // this Lock knows it took the lock (reset by Unlock)
}

// NewLock returns a Lock on the Redis key key, used verbatim, that expires
// ttl after it is taken or refreshed. A ttl below 1ms means
// [DefaultLockTTL]. A nil c is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLock(c redis.UniversalClient, key string, ttl time.Duration) (*Lock, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewLock with a nil client", sequence.ErrInvalidArgument)
	}
	if ttl < time.Millisecond {
		ttl = DefaultLockTTL
	}
	var b [16]byte
	crand.Read(b[:]) // never fails
	return &Lock{rdb: c, key: key, ttl: ttl, token: hex.EncodeToString(b[:])}, nil
}

// Key returns the Redis key of the lock.
func (l *Lock) Key() string { return l.key }

// TryLock takes the lock if nobody holds it, and reports whether it did. A
// Lock is not reentrant: TryLock is false while this Lock holds the lock
// (until Unlock). If the client loses the reply to the SET and resends it,
// the resent SET finds this Lock's own token; TryLock sees that and reports
// the lock taken rather than leaving it held by nobody who knows it.
func (l *Lock) TryLock(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, classify("lock", l.key, err)
	}
	err := l.rdb.SetArgs(ctx, l.key, l.token, redis.SetArgs{Mode: "NX", TTL: l.ttl}).Err()
	switch err {
	case nil:
		l.held.Store(true)
		return true, nil
	case redis.Nil:
		if l.held.Load() {
			return false, nil
		}
		// Taken: by someone else, or by this Lock's own SET whose reply
		// was lost and which the client resent.
		v, err := l.rdb.Get(ctx, l.key).Result()
		switch {
		case err == redis.Nil:
			return false, nil // released meanwhile: the caller tries again
		case err != nil:
			return false, classify("lock", l.key, err)
		}
		return v == l.token && l.held.CompareAndSwap(false, true), nil
	}
	return false, classify("lock", l.key, err)
}

// Lock waits until it takes the lock or ctx is done. It polls with TryLock,
// waiting 1ms after the first failure and doubling that up to 100ms.
func (l *Lock) Lock(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		ok, err := l.TryLock(ctx)
		if ok || err != nil {
			return err
		}
		if err := sleep(ctx, backoff(time.Millisecond, 100*time.Millisecond, attempt)); err != nil {
			return classify("lock", l.key, err)
		}
	}
}

// Unlock releases the lock if this Lock holds it. It returns an error
// wrapping [ErrNotHeld] if it does not (it was never taken, or it expired).
func (l *Lock) Unlock(ctx context.Context) error {
	l.held.Store(false)
	return l.ifHeld(ctx, "unlock", unlockScript)
}

// Refresh restarts the lock's ttl if this Lock holds it. It returns an
// error wrapping [ErrNotHeld] if it does not.
func (l *Lock) Refresh(ctx context.Context) error {
	return l.ifHeld(ctx, "refresh lock", refreshScript)
}

func (l *Lock) ifHeld(ctx context.Context, op string, s *redis.Script) error {
	if err := ctx.Err(); err != nil {
		return classify(op, l.key, err)
	}
	n, err := s.Run(ctx, l.rdb, []string{l.key}, l.token, l.ttl.Milliseconds()).Int64()
	if err != nil {
		return classify(op, l.key, err)
	}
	if n == 0 {
		return newError(ErrNotHeld, nil, "%s key %s: the lock is not held by this Lock (it expired or was never taken)", op, l.key)
	}
	return nil
}

// unlockScript deletes KEYS[1] if it holds the token ARGV[1].
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// refreshScript sets KEYS[1] to expire in ARGV[2] ms if it holds the token
// ARGV[1].
var refreshScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// backoff returns the wait before retry number attempt (0-based): base
// doubled attempt times, capped at limit, with up to 50% random jitter taken
// off so that waiters spread out.
func backoff(base, limit time.Duration, attempt int) time.Duration {
	d := limit
	if attempt < 30 && base<<attempt < limit {
		d = base << attempt
	}
	return d - time.Duration(rand.Int64N(int64(d)/2+1))
}

// sleep waits for d or until ctx is done, and then returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
