package redisseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from Redis: a [snowflake.Leaser].
//
// Each id has two keys, in one hash slot: the lease, a random token with an
// expiry, and the bound, the last instant its holders may have issued at,
// which never expires. A new holder issues only after the bound, so the
// ids of two holders of one id never meet, even when the first one is
// still running and cut off from Redis: it stops issuing before its
// lease can expire (see snowflake.Options.TTL) and never issues past the
// bound it recorded. An id found without a bound (never used, or Redis
// lost it) is issued with only after one TTL (see snowflake.New), so a
// Lease prefers an id a holder released, whose bound is known.
//
// Beside them, the first Lease records the layout of the series
// (refusing another with an error wrapping snowflake.ErrLayout) and an
// epoch marker, a random value: a renewal that finds the marker gone or
// changed knows Redis lost its data, and the holder stops issuing at once
// (sequence.ErrLeaseLost).
//
// The bound is what keeps ids unique across restarts, so Redis must not
// lose it: as for [NewRedisOnlyAllocator], the first Lease refuses, with an
// error wrapping [ErrUnsafe], a server that does not fsync every write
// (appendonly yes, appendfsync always) or that may evict keys
// (maxmemory-policy other than noeviction). Replication is asynchronous:
// set [LeaserOptions.Replicas] when a failover may promote a replica.
type Leaser struct {
	rdb      redis.UniversalClient
	prefix   string // the keys' prefix, ending in the hash tag
	base     string // the prefix of LeaserOptions: the store's, for its catalog
	replicas replicas
	only     onlyRedis
}

// LeaserOptions configure a [Leaser].
type LeaserOptions struct {
	// Prefix is the prefix of the Leaser's keys; "" means DefaultPrefix.
	// Every Gen that may share worker ids must use the same prefix.
	Prefix string
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services); "" means "snowflake". A name is
	// recorded with its layout, and a Lease with another layout is
	// refused.
	Name string

	// Replicas is how many replicas must have each lease, renewal and
	// release before it counts (Redis's WAIT, sent in the same round
	// trip), as [AllocatorOptions.Replicas]: without it, a failover to a
	// replica that lagged can lose a bound.
	// default: 0, do not wait.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas; a write too few
	// replicas acknowledged in time is an error.
	// default: [DefaultReplicaTimeout], 1s.
	ReplicaTimeout time.Duration
}

// NewLeaser returns a Leaser over c. A nil c is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLeaser(c redis.UniversalClient, o LeaserOptions) (*Leaser, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewLeaser with a nil client", sequence.ErrInvalidArgument)
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	return &Leaser{
		rdb:      c,
		prefix:   redisKey(prefixOrDefault(o.Prefix), "worker:"+o.Name, ":"),
		base:     prefixOrDefault(o.Prefix),
		replicas: newReplicas(o.Replicas, o.ReplicaTimeout),
	}, nil
}

// leaseScript leases a worker id of the series whose keys start with
// ARGV[1] (KEYS[1]), for the token ARGV[4] and ARGV[5] ms: first one a
// holder released (in the set of free ids), else the first id from
// ARGV[3] on, of ARGV[2], that no one holds. It checks and records the
// layout ARGV[6], and reads the epoch marker, setting it to ARGV[7] if
// there is none. It returns {id, bound, epoch}, or {-1, "", epoch} when
// every id is held.
var leaseScript = redis.NewScript(`
local p = ARGV[1]
local e = redis.call('GET', p .. 'epoch')
if not e then
	e = ARGV[7]
	redis.call('SET', p .. 'epoch', e)
end
local lay = redis.call('GET', p .. 'layout')
if lay and lay ~= ARGV[6] then
	return redis.error_reply('LAYOUT ' .. lay)
end
if not lay then
	redis.call('SET', p .. 'layout', ARGV[6])
end
local n, start = tonumber(ARGV[2]), tonumber(ARGV[3])
while true do
	local id = redis.call('SPOP', p .. 'free')
	if not id then break end
	if tonumber(id) < n and redis.call('SET', p .. 'lease:' .. id, ARGV[4], 'NX', 'PX', ARGV[5]) then
		return {tonumber(id), redis.call('GET', p .. 'bound:' .. id) or '', e}
	end
end
for k = 0, n - 1 do
	local id = (start + k) % n
	if redis.call('SET', p .. 'lease:' .. id, ARGV[4], 'NX', 'PX', ARGV[5]) then
		return {id, redis.call('GET', p .. 'bound:' .. id) or '', e}
	end
end
return {-1, '', e}
`)

// renewScript extends the lease KEYS[1] held by ARGV[1] by ARGV[2] ms
// and raises the bound KEYS[2] to ARGV[3]; 0 when the lease is not
// ARGV[1]'s, -1 when the epoch marker KEYS[3] is not ARGV[4].
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return -1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local b = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[3]) > b then redis.call('SET', KEYS[2], ARGV[3]) end
return 1
`)

// releaseScript sets the bound KEYS[2] to ARGV[2], deletes the lease
// KEYS[1] and adds the id ARGV[3] to the free ids KEYS[4], if ARGV[1]
// holds it; 0 when it does not, -1 when the epoch marker KEYS[3] is not
// ARGV[4].
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return -1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
redis.call('SADD', KEYS[4], ARGV[3])
return 1
`)

// Lease takes a free worker id below layout.Workers() for ttl. It returns
// an error wrapping snowflake.ErrLayout when the series was recorded with
// another layout, [ErrUnsafe] for a server that may lose the bounds, and
// sequence.ErrUnavailable when every id is held.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if layout.WorkerBits < 0 || layout.WorkerBits > 20 || ttl < time.Millisecond {
		return nil, newError(sequence.ErrInvalidArgument, nil, "Lease(%d worker bits, ttl %v): want 0 to 20 worker bits and a ttl of at least 1ms", layout.WorkerBits, ttl)
	}
	workers := layout.Workers()
	if err := l.only.checkClient(ctx, l.rdb, "Lease", l.prefix); err != nil {
		return nil, err
	}
	var tok, ep [16]byte
	rand.Read(tok[:])
	rand.Read(ep[:])
	start, _ := rand.Int(rand.Reader, big.NewInt(workers))
	token := hex.EncodeToString(tok[:])
	res, err := l.replicas.scriptKeys(ctx, l.rdb, leaseScript, []string{l.prefix},
		l.prefix, workers, start.Int64(), token, ttl.Milliseconds(), layout.String(), hex.EncodeToString(ep[:])).Slice()
	if err != nil {
		if lay, ok := strings.CutPrefix(err.Error(), "LAYOUT "); ok {
			return nil, newError(snowflake.ErrLayout, nil, "Lease: the series %s was recorded with the layout %q; this Gen's is %q. Ids of two layouts can meet: give this one a series of its own (LeaserOptions.Name)", l.prefix, lay, layout.String())
		}
		return nil, classify("Lease", l.prefix, err)
	}
	if len(res) != 3 {
		return nil, newError(ErrCorrupt, nil, "Lease: the lease script returned %v", res)
	}
	id, _ := res[0].(int64)
	epoch, _ := res[2].(string)
	if id < 0 {
		return nil, newError(sequence.ErrUnavailable, nil, "Lease: all %d worker ids under %s are held", workers, l.prefix)
	}
	lease := &redisLease{l: l, id: id, token: token, ttl: ttl, epoch: epoch}
	if s, _ := res[1].(string); s != "" && s != "0" {
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, newError(ErrCorrupt, err, "Lease: %sbound:%d holds %q, not nanoseconds", l.prefix, id, s)
		}
		lease.bound = time.Unix(0, ns)
	}
	return lease, nil
}

// redisLease is one holding of a worker id.
type redisLease struct {
	l     *Leaser
	id    int64
	token string
	ttl   time.Duration
	bound time.Time
	epoch string // the epoch marker when leased
}

func (r *redisLease) Worker() int64    { return r.id }
func (r *redisLease) Bound() time.Time { return r.bound }

func (r *redisLease) keys() []string {
	id := strconv.FormatInt(r.id, 10)
	return []string{r.l.prefix + "lease:" + id, r.l.prefix + "bound:" + id, r.l.prefix + "epoch", r.l.prefix + "free"}
}

// Renew extends the lease and records bound; the server's persistence is
// read again first (every path, every time: a server whose settings
// changed since the lease is refused, ErrUnsafe).
func (r *redisLease) Renew(ctx context.Context, bound time.Time) error {
	if err := r.l.only.checkClient(ctx, r.l.rdb, "Renew", r.l.prefix); err != nil {
		return err
	}
	return r.run(ctx, "Renew", renewScript, r.token, r.ttl.Milliseconds(), bound.UnixNano(), r.epoch)
}

// Release records bound, which may be below the bounds renewals recorded
// (the holder knows its last id) but never below the bound the id had when
// leased: a holder that issued nothing gives the zero time, and the bound
// of the holders before it stays.
func (r *redisLease) Release(ctx context.Context, bound time.Time) error {
	var ns int64
	if !r.bound.IsZero() {
		ns = r.bound.UnixNano()
	}
	if !bound.IsZero() {
		ns = max(ns, bound.UnixNano())
	}
	return r.run(ctx, "Release", releaseScript, r.token, ns, r.id, r.epoch)
}

func (r *redisLease) run(ctx context.Context, op string, s *redis.Script, args ...any) error {
	keys := r.keys()
	held, err := r.l.replicas.scriptKeys(ctx, r.l.rdb, s, keys, args...).Int64()
	if err != nil {
		return classify(op, keys[0], err)
	}
	switch held {
	case 0:
		return newError(sequence.ErrLeaseLost, nil, "%s: the lease %s is no longer this holder's", op, keys[0])
	case -1:
		return newError(sequence.ErrLeaseLost, nil, "%s: the epoch marker %s is gone or changed: Redis lost its data (restarted empty, flushed, or failed over), so the lease and its bound may be gone", op, keys[2])
	}
	return nil
}
