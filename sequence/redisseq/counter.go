package redisseq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Defaults and limits of [CounterOptions].
const (
	// DefaultStep is the size of a refill when the options give none.
	DefaultStep = 1000
	// MaxStep is the largest refill; larger steps are lowered to it.
	MaxStep = 1 << 40
	// DefaultRetryWait is the first wait of a caller that finds a key
	// being refilled by another process, when the options give none.
	DefaultRetryWait = 2 * time.Millisecond
)

// maxTake bounds the numbers one script call issues. Lua turns numbers into
// strings with "%.14g", so every number a script hands back to Redis must
// stay well below 10^14.
const maxTake = 1 << 30

// CounterOptions configures a [Counter]. The zero value is ready to use;
// an invalid value is replaced as described on its field.
type CounterOptions struct {
	// Prefix starts every Redis key of the Counter; see the package comment
	// for the layout. Braces and "%" in it are percent-escaped.
	// default: [DefaultPrefix], "sn:".
	Prefix string

	// Step is how many numbers a refill takes from the durable allocator.
	// Redis issues them one by one; the rest of a range is lost (a gap)
	// when Redis loses its data.
	// default: [DefaultStep], 1000. A value below 1 takes the default; a
	// value above [MaxStep] is lowered to it.
	Step int64

	// LockTTL is how long the refill lock of a key lives if its holder
	// crashes before releasing it.
	// default: [DefaultLockTTL], 10s. A value below 1ms takes the default.
	LockTTL time.Duration

	// RetryWait is the first wait of a caller that finds a key being
	// refilled by another process; it doubles with each try up to 64 times
	// RetryWait.
	// default: [DefaultRetryWait], 2ms. A value below 1µs takes the default.
	RetryWait time.Duration

	// Replicas is how many replicas must have each write of the range
	// before the Counter returns a number from it (Redis's WAIT, sent in
	// the same round trip). Replication is asynchronous, so without it a
	// failover to a replica that lagged behind moves the range back and
	// numbers issued just before the failover are issued again. Set it to
	// the number of replicas a failover may promote.
	// default: 0, do not wait.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas. Numbers that too few
	// replicas acknowledged in time are not returned (a gap), and the call
	// returns an error wrapping [sequence.ErrUnavailable].
	// Keep it below the client's ReadTimeout, which bounds the whole round
	// trip.
	// default: [DefaultReplicaTimeout], 1s.
	ReplicaTimeout time.Duration
}

// Counter is a strict [sequence.Gen]: "first come, first served" across
// every process sharing one Redis. Each key's current range [cur+1, max] is
// a Redis hash, and a script hands out the next number of it atomically, so
// a number issued after another call returned is always larger, whichever
// process made the calls. A call costs one round trip.
//
// When a key's range is missing or spent, one caller takes the key's [Lock],
// checks again, reserves the next Step numbers from the durable allocator
// (a [github.com/sngen/sn/sequence/boltseq.Store], or a database), and
// installs them with a script that refuses any range not above the one in
// Redis; the others retry after a short wait. So the range in Redis only
// ever rises, and if Redis loses its data the next range comes from the
// durable store, above everything ever issued: a gap, never a repeat. If
// the durable store returns a range at or below Redis's, the Counter raises
// the store's floor (when it is a [sequence.Floorer]) and reserves again;
// if that fails it returns an error wrapping [sequence.ErrRegressed].
//
// That covers a Redis that loses all of its data, not one that goes back in
// time: run it either without persistence (save "" and appendonly no) or
// with appendfsync always. A Redis that restarts from an RDB snapshot, or
// from an append-only file written with appendfsync everysec, brings back
// an older cur, and the numbers issued after it are issued again.
//
// There is no buffering: when Redis is unreachable, calls fail with an
// error wrapping [sequence.ErrUnavailable] (bounded by their context).
//
// Redis replicates asynchronously: with replicas and automatic failover
// (Sentinel, Cluster), set [CounterOptions.Replicas] so that no number is
// returned before the replicas have it; otherwise a failover to a lagging
// replica can repeat the numbers issued just before it.
//
// A Counter is safe for concurrent use and implements [sequence.Batcher],
// [sequence.Binder] and [sequence.Floorer]. It holds no resource of its own;
// closing the client and the durable allocator is the caller's business.
type Counter struct {
	rdb      redis.UniversalClient
	durable  sequence.Allocator
	floorer  sequence.Floorer // the durable allocator's floors, or nil
	ident    identified       // the durable allocator's identity, or nil
	prefix   string
	step     int64
	lockTTL  time.Duration
	retry    time.Duration
	replicas replicas

	ledger atomic.Pointer[string] // the durable allocator's identity, once known; "" if it has none

	mu      sync.Mutex
	refills map[string]*refill // range key -> the refill in flight in this process
	groups  sync.Map           // range key -> *group: the calls of Next queued in this process
}

// refill is one refill in flight; done closes when it ends, after err is set.
type refill struct {
	done chan struct{}
	err  error
}

// NewCounter returns a Counter that issues numbers from ranges in c and
// refills them from durable. A nil c or durable is an error wrapping
// [sequence.ErrInvalidArgument].
func NewCounter(c redis.UniversalClient, durable sequence.Allocator, o CounterOptions) (*Counter, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewCounter with a nil client", sequence.ErrInvalidArgument)
	}
	if durable == nil {
		return nil, fmt.Errorf("%w: redisseq.NewCounter with a nil durable allocator", sequence.ErrInvalidArgument)
	}
	if o.Step < 1 {
		o.Step = DefaultStep
	}
	if o.LockTTL < time.Millisecond {
		o.LockTTL = DefaultLockTTL
	}
	if o.RetryWait < time.Microsecond {
		o.RetryWait = DefaultRetryWait
	}
	fl, _ := durable.(sequence.Floorer)
	id, _ := durable.(identified)
	return &Counter{
		rdb:      c,
		durable:  durable,
		floorer:  fl,
		ident:    id,
		prefix:   prefixOrDefault(o.Prefix),
		step:     min(o.Step, MaxStep),
		lockTTL:  o.LockTTL,
		retry:    o.RetryWait,
		replicas: newReplicas(o.Replicas, o.ReplicaTimeout),
		refills:  make(map[string]*refill),
	}, nil
}

// identified is a ledger with an identity: StoreID returns the same
// string in every process that opens the same store, and another for
// another store (sqlseq's, etcdseq's, boltseq's Store).
type identified interface {
	StoreID(ctx context.Context) (string, error)
}

// ledgerID returns the identity of the durable allocator (its StoreID
// method), or "" if it has none. The scripts record it in
// every range they install and refuse a range recorded with another: two
// ledgers behind one Redis each hand out what the other has issued, once
// Redis loses its data.
func (c *Counter) ledgerID(ctx context.Context, rkey string) (string, error) {
	if id := c.ledger.Load(); id != nil {
		return *id, nil
	}
	var id string
	if c.ident != nil {
		var err error
		if id, err = c.ident.StoreID(ctx); err != nil {
			return "", durableError("identify the durable allocator of", rkey, c.durable, err)
		}
	}
	c.ledger.Store(&id)
	return id, nil
}

// otherLedger explains a LEDGER reply of a script: the range was reserved
// from another ledger.
func (c *Counter) otherLedger(rkey, ours string, err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return nil
	}
	theirs, ok := strings.CutPrefix(trimScript(strings.TrimPrefix(rerr.Error(), "ERR ")), ledgerCode)
	if !ok {
		return nil
	}
	return newError(ErrOtherLedger, err, "key %s holds a range reserved from the ledger %q, and this process's durable allocator %T is %q: "+
		"every process that uses one Redis must use one ledger (the same database and table)", rkey, theirs, c.durable, ours)
}

// ledgerCode starts the error replies of the scripts that find a range
// reserved from another ledger.
const ledgerCode = "LEDGER "

// Key returns the Redis key of the hash that holds key's current range.
func (c *Counter) Key(key string) string { return redisKey(c.prefix, key, ":range") }

// counterKey is one key of a Counter, with its Redis key worked out.
type counterKey struct {
	c        *Counter
	key      string
	rangeKey string
	// exact makes take issue all it is asked for from one range or
	// nothing (an Allocator's block is consecutive), and refills reserve
	// at least that much.
	exact bool
}

func (c *Counter) bind(key string) *counterKey {
	return &counterKey{c: c, key: key, rangeKey: c.Key(key)}
}

// Next returns the next number for key: larger than every number any
// Counter sharing the Redis returned for key before this call started.
func (c *Counter) Next(ctx context.Context, key string) (int64, error) {
	k := counterKey{c: c, key: key, rangeKey: c.Key(key)}
	return k.Next(ctx)
}

// Bind returns a Handle for key that skips building the Redis key on every
// call. It is safe for concurrent use and shares its counter with Next.
func (c *Counter) Bind(key string) sequence.Handle { return c.bind(key) }

// Next returns the next number for the Handle's key.
//
// Concurrent calls for one key in one process are coalesced (group
// commit): up to [maxFlushes] round trips for the key are under way at
// once, and the calls that arrive meanwhile queue; the next round trip
// takes numbers for all of them at once, handed out in the order the
// calls arrived. So a call that started after another returned still gets
// a larger number, in this process and in every other, and many callers
// cost a few round trips instead of one each, while a few callers wait for
// no one.
func (k *counterKey) Next(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, classify("Next", k.rangeKey, err)
	}
	g := k.c.group(k.rangeKey)
	g.mu.Lock()
	if g.active < maxFlushes && len(g.waiting) == 0 {
		// No one to wait for: a round trip of the caller's own, and what
		// queued meanwhile goes to a flush.
		g.active++
		g.mu.Unlock()
		n, err := k.one(ctx)
		k.done(ctx, g)
		return n, err
	}
	w := &waiter{done: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	lead := g.active < maxFlushes
	if lead {
		g.active++
	}
	g.mu.Unlock()
	if lead {
		k.flush(ctx, g)
	}
	select {
	case <-w.done:
		return w.n, w.err
	case <-ctx.Done():
		// The number drawn for this call, if any, becomes a gap.
		return 0, classify("Next", k.rangeKey, ctx.Err())
	}
}

// maxFlushes is how many round trips for one key a process has under way
// at once before further calls queue for the next.
const maxFlushes = 2

// group is the queue of one key's calls in one process.
type group struct {
	mu      sync.Mutex
	waiting []*waiter
	active  int // flushes under way or about to be
}

// waiter is one queued call; done closes when n or err is set.
type waiter struct {
	n    int64
	err  error
	done chan struct{}
}

func (c *Counter) group(rangeKey string) *group {
	if g, ok := c.groups.Load(rangeKey); ok {
		return g.(*group)
	}
	g, _ := c.groups.LoadOrStore(rangeKey, &group{})
	return g.(*group)
}

// flushTimeout bounds one round of a flush, which serves callers other
// than the one whose context it started with.
const flushTimeout = 10 * time.Second

// flush takes numbers for the queued calls and hands them out in order. The
// caller that starts it serves one batch (its own call is in it, unless
// another flush took it) and hands what queued meanwhile to a goroutine.
func (k *counterKey) flush(ctx context.Context, g *group) {
	g.mu.Lock()
	batch := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	if len(batch) > 0 {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		nums, err := k.issue(fctx, make([]int64, 0, len(batch)), len(batch))
		cancel()
		for i, w := range batch {
			if i < len(nums) {
				w.n = nums[i]
			} else {
				w.err = err
			}
			close(w.done)
		}
	}
	k.done(ctx, g)
}

// done ends a round trip: one less under way, or, when calls queued
// meanwhile, a flush for them.
func (k *counterKey) done(ctx context.Context, g *group) {
	g.mu.Lock()
	more := len(g.waiting) > 0
	if !more {
		g.active--
	}
	g.mu.Unlock()
	if more {
		go k.flush(context.WithoutCancel(ctx), g)
	}
}

// one issues one number with the caller's own context.
func (k *counterKey) one(ctx context.Context) (int64, error) {
	attempt := 0
	for {
		if err := ctx.Err(); err != nil {
			return 0, classify("Next", k.rangeKey, err)
		}
		take, last, err := k.take(ctx, 1)
		if err == nil && take == 0 {
			take, last, err = k.refill(ctx, 1, &attempt)
		}
		if err != nil || take == 1 {
			return last, err
		}
	}
}

// NextN appends n numbers for key to dst, in increasing order. Each round
// trip issues as many as the current range has left (up to n), so a batch
// usually costs one round trip; the numbers are consecutive within a range.
// It returns an error wrapping [sequence.ErrInvalidArgument] if n < 0.
func (c *Counter) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	k := counterKey{c: c, key: key, rangeKey: c.Key(key)}
	if n < 0 {
		return dst, newError(sequence.ErrInvalidArgument, nil, "NextN key %s: n is %d, want n >= 0", k.rangeKey, n)
	}
	return k.issue(ctx, dst, n)
}

// issue appends n numbers to dst; [counterKey.Next] is issue for n == 1,
// without the slice.
func (k *counterKey) issue(ctx context.Context, dst []int64, n int) ([]int64, error) {
	attempt := 0
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return dst, classify("Next", k.rangeKey, err)
		}
		want := min(int64(n), maxTake)
		take, last, err := k.take(ctx, want)
		if err == nil && take == 0 {
			take, last, err = k.refill(ctx, want, &attempt)
		}
		if err != nil {
			return dst, err
		}
		for i := range take {
			dst = append(dst, last-take+1+i)
		}
		n -= int(take)
	}
	return dst, nil
}

// take issues up to want numbers from the range in Redis. It returns how
// many it issued and the last of them; take == 0 means the range is missing
// or spent.
func (k *counterKey) take(ctx context.Context, want int64) (take, last int64, err error) {
	script := takeScript
	if k.exact {
		script = takeExactScript
	}
	id, err := k.c.ledgerID(ctx, k.rangeKey)
	if err != nil {
		return 0, 0, err
	}
	var res any
	if k.exact && k.key != "" {
		// The block is recorded, in the same script, in the key's list
		// of grants, with the process it goes to (see grants.go).
		res, err = k.c.replicas.scriptKeys(ctx, k.c.rdb, script, []string{k.rangeKey, k.c.grantsKey(k.key)}, want, id, journal.ByOf(ctx)).Result()
	} else {
		res, err = k.c.replicas.script(ctx, k.c.rdb, script, k.rangeKey, want, id).Result()
	}
	if err != nil {
		if oerr := k.c.otherLedger(k.rangeKey, id, err); oerr != nil {
			return 0, 0, oerr
		}
		return 0, 0, classify("Next", k.rangeKey, err)
	}
	switch v := res.(type) {
	case int64: // 0: missing or spent; else the one number asked for
		if v == 0 {
			return 0, 0, nil
		}
		take, last = 1, v
	case []any:
		if len(v) == 2 {
			switch t := v[0].(type) {
			case int64:
				take = t
			case string:
				take, _ = strconv.ParseInt(t, 10, 64)
			}
			switch l := v[1].(type) {
			case int64:
				last = l
			case string:
				last, _ = strconv.ParseInt(l, 10, 64)
			}
		}
	}
	if take >= 1 && take <= want && last-take+1 >= 1 {
		return take, last, nil
	}
	return 0, 0, newError(ErrCorrupt, nil, "key %s holds a corrupt value: the next script returned %v", k.rangeKey, res)
}

// refill installs a new range for the key, or waits for whoever is doing
// it, and then issues up to want numbers if it can. It returns take == 0
// when the caller should try the range again.
func (k *counterKey) refill(ctx context.Context, want int64, attempt *int) (take, last int64, err error) {
	c := k.c
	// One refill per key in this process; the others wait for it.
	c.mu.Lock()
	if f := c.refills[k.rangeKey]; f != nil {
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil && !isContextError(f.err) {
				return 0, 0, f.err
			}
			return 0, 0, nil
		case <-ctx.Done():
			return 0, 0, classify("Next", k.rangeKey, ctx.Err())
		}
	}
	f := &refill{done: make(chan struct{})}
	c.refills[k.rangeKey] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.refills, k.rangeKey)
		c.mu.Unlock()
		f.err = err
		close(f.done)
	}()

	lock, err := NewLock(c.rdb, redisKey(c.prefix, k.key, ":lock"), c.lockTTL)
	if err != nil {
		return 0, 0, err
	}
	ok, err := lock.TryLock(ctx)
	if err != nil {
		if ctx.Err() != nil { // the caller's time ran out: report it on the range
			return 0, 0, classify("Next", k.rangeKey, ctx.Err())
		}
		return 0, 0, err
	}
	if !ok {
		// Another process is refilling: give it a moment, then try again.
		d := backoff(c.retry, 64*c.retry, *attempt)
		*attempt++
		if err := sleep(ctx, d); err != nil {
			return 0, 0, classify("Next", k.rangeKey, err)
		}
		return 0, 0, nil
	}
	defer func() {
		// Release the lock even if ctx is done; if this fails, it expires.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		lock.Unlock(uctx)
		cancel()
	}()
	// Double check: the range may have been refilled while this caller
	// went from finding it spent to holding the lock.
	if take, last, err = k.take(ctx, want); err != nil || take > 0 {
		return take, last, err
	}
	if err := k.install(ctx, want); err != nil {
		return 0, 0, err
	}
	if k.exact {
		// Record in the ledger, meanwhile, to whom the range before was
		// handed.
		go k.c.flushLater(k.key)
	}
	return k.take(ctx, want)
}

// install reserves a range from the durable allocator and installs it in
// Redis. A range at or below Redis's is refused by the script; then the
// durable allocator is floored above Redis's range and asked again. An
// exact key's range holds at least want numbers.
func (k *counterKey) install(ctx context.Context, want int64) error {
	c := k.c
	const tries = 3
	for try := 1; ; try++ {
		r, err := k.reserve(ctx, want)
		if err != nil {
			return err
		}
		id, err := c.ledgerID(ctx, k.rangeKey)
		if err != nil {
			return err
		}
		res, err := c.replicas.scriptOnce(ctx, c.rdb, installScript, k.rangeKey,
			strconv.FormatInt(r.First-1, 10), strconv.FormatInt(r.Last, 10), id).Slice()
		if err != nil {
			if oerr := c.otherLedger(k.rangeKey, id, err); oerr != nil {
				return oerr
			}
			return classify("refill", k.rangeKey, err)
		}
		if len(res) == 1 && res[0] == int64(1) {
			return nil
		}
		var bound int64 = -1
		var spent int64
		if len(res) == 3 {
			s, _ := res[1].(string)
			if b, err := strconv.ParseInt(s, 10, 64); err == nil {
				bound = b
			}
			spent, _ = res[2].(int64)
		}
		if bound < 0 {
			return newError(ErrCorrupt, nil, "key %s holds a corrupt value: the install script returned %v", k.rangeKey, res)
		}
		if spent == 0 {
			return nil // someone else installed a higher range meanwhile
		}
		fl := c.floorer
		if fl == nil || try == tries {
			return newError(sequence.ErrRegressed, nil,
				"refill key %s: the durable allocator %T returned %v, not above %d, the top of the range in Redis",
				k.rangeKey, c.durable, r, bound)
		}
		if err := fl.Floor(ctx, k.key, bound); err != nil {
			return durableError("raise the durable floor of", k.rangeKey, c.durable, err)
		}
	}
}

// reserve takes Step numbers from the durable allocator, or a single one
// when fewer than Step are left; an exact key takes at least want.
func (k *counterKey) reserve(ctx context.Context, want int64) (sequence.Range, error) {
	c := k.c
	n, least := c.step, int64(1)
	if k.exact {
		n, least = max(n, want), want
	}
	r, err := k.allocate(ctx, n)
	if errors.Is(err, sequence.ErrExhausted) && n > least {
		n = least
		r, err = k.allocate(ctx, n)
	}
	if err != nil {
		return r, durableError("refill", k.rangeKey, c.durable, err)
	}
	if r.First < 1 || r.Len() < 1 {
		return r, newError(sequence.ErrUnavailable, nil, "refill key %s: the durable allocator %T returned the invalid range %v", k.rangeKey, c.durable, r)
	}
	if r.Len() > n { // more than asked for: keep what was asked for
		r.Last = r.First + n - 1
	}
	return r, nil
}

// allocate calls the durable allocator, turning a panic into an error.
func (k *counterKey) allocate(ctx context.Context, n int64) (r sequence.Range, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%T.Allocate(%q, %d) panicked: %v", k.c.durable, k.key, n, p)
		}
	}()
	// The ledger's journal names the cache as the range's holder, which
	// holds the range for the processes it serves, not drawn at once; an
	// Allocator's range is Cached, and the processes that take its blocks
	// are recorded later (Handed, see grants.go).
	ctx = journal.WithDrawn(journal.WithBy(ctx, k.c.cacheName()), false)
	if k.exact {
		ctx = journal.WithCache(ctx)
	}
	return k.c.durable.Allocate(ctx, k.key, n)
}

// durableError wraps an error of the durable allocator. It keeps the
// allocator's own sentinels and adds [sequence.ErrUnavailable] unless the
// error is final (exhausted, closed, invalid) or a cancelled context.
func durableError(op, rkey string, a sequence.Allocator, err error) error {
	var kind error = sequence.ErrUnavailable
	for _, final := range []error{sequence.ErrUnavailable, sequence.ErrExhausted, sequence.ErrClosed, sequence.ErrInvalidArgument, sequence.ErrRegressed, context.Canceled} {
		if errors.Is(err, final) {
			kind = nil
		}
	}
	if errors.Is(err, journal.ErrBehind) { // the ledger's counter went back: refused
		kind = sequence.ErrRegressed
	}
	return newError(kind, err, "%s key %s: durable allocator %T: %v", op, rkey, a, err)
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Floor makes every number issued for key after Floor returns greater than
// floor. It raises the durable allocator's floor, then moves the range in
// Redis above floor (or leaves a spent range at floor, so that no range at
// or below it can be installed later). A floor at or below what was issued
// is a no-op.
//
// It returns an error wrapping errors.ErrUnsupported if the durable
// allocator is not a [sequence.Floorer], and one wrapping
// [sequence.ErrInvalidArgument] if floor < 0.
func (c *Counter) Floor(ctx context.Context, key string, floor int64) error {
	rkey := c.Key(key)
	if floor < 0 {
		return newError(sequence.ErrInvalidArgument, nil, "Floor key %s: floor %d is negative", rkey, floor)
	}
	if err := ctx.Err(); err != nil {
		return classify("Floor", rkey, err)
	}
	fl := c.floorer
	if fl == nil {
		return newError(errors.ErrUnsupported, nil, "Floor key %s: the durable allocator %T cannot raise a floor", rkey, c.durable)
	}
	if floor == 0 {
		return nil // every number is above 0
	}
	if err := fl.Floor(ctx, key, floor); err != nil {
		return durableError("Floor", rkey, c.durable, err)
	}
	err := c.replicas.script(ctx, c.rdb, counterFloorScript, rkey, strconv.FormatInt(floor, 10)).Err()
	return classify("Floor", rkey, err)
}

// String describes c for error messages.
func (c *Counter) String() string {
	return fmt.Sprintf("redisseq.Counter(prefix %q, step %d, durable %T)", c.prefix, c.step, c.durable)
}

// The range hash has two fields, decimal integers written by these scripts
// only, always together: cur, the last number issued, and max, the last
// number of the range. The range is spent when cur >= max. A third field,
// ledger, is the identity of the ledger the range was reserved from, when
// it has one; every script is given the caller's (or "") and refuses a
// range with another, with the reply "LEDGER " and the range's. A fourth,
// boot, is the data's history when the range was installed: the run_id of
// the Redis server and its replication ID (master_replid). A server that
// restarted (from an RDB snapshot, an AOF missing its last second) has
// another run_id; a replica promoted in its place, and a former master
// promoted again after it followed another, have another replication ID;
// whatever they hold of a range may be behind numbers issued from it. So
// a range of another boot is never taken from: the key is refilled from
// the ledger, above everything reserved. That costs a gap, never a
// repeat. (An operator who loads old data into a running server by hand,
// DEBUG RELOAD of an old file, RESTORE of an old DUMP, is not seen.)
//
// ledgerCheck is that check, for v, the values of HMGET cur max ledger.
const ledgerCheck = `
local function ledger_ok(v, ours)
	return ours == '' or not v[3] or v[3] == ours
end
local function boot()
	local id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
	local repl = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
	return id .. ':' .. (repl or '')
end
`

// takeScript issues up to ARGV[1] numbers from the range KEYS[1]. It returns
// 0 when the range is missing or spent; otherwise, when one number was
// asked for, that number, and else {take, last}. A range missing one of
// its fields is missing: the refill installs a range above the other.
//
// While max has at most 15 digits, cur + want stays below 2^53, where Lua
// numbers are exact: the script increments cur with HINCRBY and compares
// the result with max in Lua, giving back what went past max. That is two
// commands in the common case, the least a checked increment costs. Above
// that, the script compares strings and lets Redis do the arithmetic, and
// last comes back as a string.
var takeScript = redis.NewScript(luaInt + ledgerCheck + `
local v = redis.call('HMGET', KEYS[1], 'cur', 'max', 'ledger', 'boot')
if not ledger_ok(v, ARGV[2]) then
	return redis.error_reply('LEDGER ' .. v[3])
end
if not v[1] or not v[2] or v[4] ~= boot() then
	return 0
end
local max = v[2]
local want = tonumber(ARGV[1])
if #max <= 15 then
	local m = string.find(max, '^%d+$') and tonumber(max)
	if not m then
		return redis.error_reply('CORRUPT field max is ' .. string.format('%q', max))
	end
	-- If cur is not an integer, HINCRBY fails before anything changed.
	local c = redis.call('HINCRBY', KEYS[1], 'cur', want)
	if c <= m then
		if want == 1 then
			return c
		end
		return {want, c}
	end
	local first = c - want + 1
	if first > m then -- spent already: undo
		redis.call('HINCRBY', KEYS[1], 'cur', -want)
		return 0
	end
	redis.call('HSET', KEYS[1], 'cur', max)
	return {m - first + 1, m}
end
local cur = redis.call('HGET', KEYS[1], 'cur')
if not cur or not canon(cur) or not canon(max) or cur == '0' then
	return redis.error_reply('CORRUPT fields cur, max are ' .. string.format('%q, %q', string.sub(cur or '', 1, 40), string.sub(max, 1, 40)))
end
if cmp(cur, max) >= 0 then
	return 0
end
-- left = max - cur, done by Redis in int64 in a scratch field; it is small
-- (a range is at most a Step long), so exact as a Lua number.
redis.call('HSET', KEYS[1], 'tmp', max)
local left = redis.call('HINCRBY', KEYS[1], 'tmp', '-' .. cur)
redis.call('HDEL', KEYS[1], 'tmp')
local take = want
if left < take then
	take = left
end
redis.call('HINCRBY', KEYS[1], 'cur', take)
return {take, redis.call('HGET', KEYS[1], 'cur')}
`)

// takeExactScript issues exactly ARGV[1] numbers from the range KEYS[1],
// or none: it returns 0 when the range is missing or has fewer left, and
// then marks a range with some left as spent (the rest is a gap), so that
// a refill may install the next. Otherwise it returns {ARGV[1], last} as
// strings, and appends "count last holder" (ARGV[3]) to the list of
// grants KEYS[2]. Every comparison and sum is done by Redis in int64, so it is
// exact up to math.MaxInt64: Lua's doubles are not above 2^53.
var takeExactScript = redis.NewScript(luaInt + ledgerCheck + `
local v = redis.call('HMGET', KEYS[1], 'cur', 'max', 'ledger', 'boot')
if not ledger_ok(v, ARGV[2]) then
	return redis.error_reply('LEDGER ' .. v[3])
end
if not v[1] or not v[2] or v[4] ~= boot() then
	return 0
end
if not canon(v[1]) or not canon(v[2]) then
	return redis.error_reply('CORRUPT fields cur, max are ' .. string.format('%q, %q', string.sub(v[1], 1, 40), string.sub(v[2], 1, 40)))
end
if cmp(v[1], v[2]) >= 0 then
	return 0
end
-- rest = max - cur - want; Redis reads no "-0", so cur 0 is left out.
redis.call('HSET', KEYS[1], 'tmp', v[2])
if v[1] ~= '0' then
	redis.call('HINCRBY', KEYS[1], 'tmp', '-' .. v[1])
end
local rest = redis.call('HINCRBY', KEYS[1], 'tmp', '-' .. ARGV[1])
redis.call('HDEL', KEYS[1], 'tmp')
if rest < 0 then
	redis.call('HSET', KEYS[1], 'cur', v[2])
	return 0
end
redis.call('HINCRBY', KEYS[1], 'cur', ARGV[1])
local last = redis.call('HGET', KEYS[1], 'cur')
if KEYS[2] then
	redis.call('RPUSH', KEYS[2], ARGV[1] .. ' ' .. last .. ' ' .. ARGV[3])
end
return {ARGV[1], last}
`)

// installScript installs the range cur=ARGV[1], max=ARGV[2] in KEYS[1],
// of this server's boot, if it is above the range there (ARGV[1] >= max
// and >= cur), and returns {1}; otherwise it changes nothing and returns
// {0, top, spent}, top being the larger of cur and max, and spent 1 if
// cur >= max or the range is of another boot, else 0. A range installed
// starts at the field floor when that is higher: a number voided above
// the range before (voidScript) is not handed out, though the ledger
// reserved it before the void was noted. No script
// writes a cur above max: such a range is corrupt, and raising the ledger
// to it could exhaust the key on every machine.
var installScript = redis.NewScript(luaInt + ledgerCheck + `
local v = redis.call('HMGET', KEYS[1], 'cur', 'max', 'ledger', 'boot', 'floor')
local b = boot()
if not ledger_ok(v, ARGV[3]) then
	return redis.error_reply('LEDGER ' .. v[3])
end
local top
for i = 1, 2 do
	if v[i] then
		if not canon(v[i]) then
			return redis.error_reply('CORRUPT field ' .. ({'cur', 'max'})[i] .. ' is ' .. string.format('%q', string.sub(v[i], 1, 40)))
		end
		if not top or cmp(v[i], top) > 0 then
			top = v[i]
		end
	end
end
if v[1] and v[2] and cmp(v[1], v[2]) > 0 then
	return redis.error_reply('CORRUPT field cur ' .. string.format('%q', string.sub(v[1], 1, 40)) .. ' is above max ' .. string.format('%q', string.sub(v[2], 1, 40)))
end
if top and cmp(ARGV[1], top) < 0 then
	local spent = 1
	if v[1] and v[2] and cmp(v[1], v[2]) < 0 and v[4] == b then
		spent = 0
	end
	return {0, top, spent}
end
local cur = ARGV[1]
if v[5] and canon(v[5]) and cmp(v[5], cur) > 0 then
	-- A void (or a floor) above the range before: nothing at or below it
	-- is handed out, though the ledger reserved it before the void.
	cur = v[5]
	if cmp(cur, ARGV[2]) > 0 then
		cur = ARGV[2]
	end
end
redis.call('HSET', KEYS[1], 'cur', cur, 'max', ARGV[2], 'boot', b)
if ARGV[3] ~= '' then
	redis.call('HSET', KEYS[1], 'ledger', ARGV[3])
end
return {1}
`)

// counterFloorScript makes the range KEYS[1] issue nothing at or below
// ARGV[1], and records the highest floor in its field floor, below which
// a return (returnRangeScript) gives nothing back. If the range ends above the floor, cur moves up to it.
// Otherwise, and when the range is missing, it leaves a spent range at the
// floor, so that the install script refuses every range at or below it.
var counterFloorScript = redis.NewScript(luaInt + `
local f = ARGV[1]
local of = redis.call('HGET', KEYS[1], 'floor')
if not of or not canon(of) or cmp(f, of) > 0 then
	redis.call('HSET', KEYS[1], 'floor', f)
end
local v = redis.call('HMGET', KEYS[1], 'cur', 'max')
for i = 1, 2 do
	if v[i] and not canon(v[i]) then
		return redis.error_reply('CORRUPT field ' .. ({'cur', 'max'})[i] .. ' is ' .. string.format('%q', string.sub(v[i], 1, 40)))
	end
end
if v[1] and v[2] then
	if cmp(v[1], f) >= 0 then
		return 0
	end
	if cmp(f, v[2]) < 0 then
		redis.call('HSET', KEYS[1], 'cur', f)
		return 1
	end
end
local top = f
for i = 1, 2 do
	if v[i] and cmp(v[i], top) > 0 then
		top = v[i]
	end
end
redis.call('HSET', KEYS[1], 'cur', top, 'max', top)
return 1
`)
