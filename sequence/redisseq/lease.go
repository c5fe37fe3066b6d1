package redisseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
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
// bound it recorded.
//
// The bound is what keeps ids unique across restarts, so Redis must not
// lose it: as for [NewRedisOnlyAllocator], the first Lease refuses, with an
// error wrapping [ErrUnsafe], a server that does not fsync every write
// (appendonly yes, appendfsync always). A Redis that comes back empty or
// from an older snapshot would hand the ids out again with their bounds
// gone.
type Leaser struct {
	rdb    redis.UniversalClient
	prefix string // the keys' prefix, ending in the hash tag
	only   onlyRedis
}

// LeaserOptions configure a [Leaser].
type LeaserOptions struct {
	// Prefix is the prefix of the Leaser's keys; "" means DefaultPrefix.
	// Every Gen that may share worker ids must use the same prefix.
	Prefix string
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services); "" means "snowflake".
	Name string
}

// NewLeaser returns a Leaser over c.
func NewLeaser(c redis.UniversalClient, opts *LeaserOptions) *Leaser {
	if c == nil {
		panic("redisseq: NewLeaser with a nil client")
	}
	var o LeaserOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	return &Leaser{rdb: c, prefix: redisKey(prefixOrDefault(o.Prefix), "worker:"+o.Name, ":")}
}

// leaseScript takes the first free id from ARGV[3] on, of ARGV[2], for the
// token ARGV[4] and ARGV[5] ms: the key prefix is ARGV[1]. It returns {id,
// bound} or nil when every id is held.
var leaseScript = redis.NewScript(`
local n, start = tonumber(ARGV[2]), tonumber(ARGV[3])
for k = 0, n - 1 do
	local id = (start + k) % n
	if redis.call('SET', ARGV[1] .. 'lease:' .. id, ARGV[4], 'NX', 'PX', ARGV[5]) then
		return {id, redis.call('GET', ARGV[1] .. 'bound:' .. id) or ''}
	end
end
return false
`)

// renewScript extends the lease KEYS[1] held by ARGV[1] by ARGV[2] ms
// and raises the bound KEYS[2] to ARGV[3]; 0 when the lease is not ARGV[1]'s.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local b = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[3]) > b then redis.call('SET', KEYS[2], ARGV[3]) end
return 1
`)

// releaseScript sets the bound KEYS[2] to ARGV[2] and deletes the lease
// KEYS[1] if ARGV[1] holds it; 0 when it does not.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 1
`)

// Lease takes a free worker id below workers for ttl.
func (l *Leaser) Lease(ctx context.Context, workers int64, ttl time.Duration) (snowflake.Lease, error) {
	if workers < 1 || ttl < time.Millisecond {
		return nil, fmt.Errorf("%w: redisseq: Lease(%d workers, ttl %v)", sequence.ErrInvalidArgument, workers, ttl)
	}
	if err := l.only.checkClient(ctx, l.rdb, "Lease", l.prefix); err != nil {
		return nil, err
	}
	var tok [16]byte
	rand.Read(tok[:])
	start, _ := rand.Int(rand.Reader, big.NewInt(workers))
	token := hex.EncodeToString(tok[:])
	res, err := leaseScript.Run(ctx, l.rdb, []string{l.prefix}, l.prefix, workers, start.Int64(), token, ttl.Milliseconds()).Slice()
	if err == redis.Nil {
		return nil, newError(sequence.ErrUnavailable, nil, "Lease: all %d worker ids under %s are held", workers, l.prefix)
	}
	if err != nil {
		return nil, classify("Lease", l.prefix, err)
	}
	id, _ := res[0].(int64)
	lease := &redisLease{l: l, id: id, token: token, ttl: ttl}
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
}

func (r *redisLease) Worker() int64    { return r.id }
func (r *redisLease) Bound() time.Time { return r.bound }

func (r *redisLease) keys() []string {
	id := strconv.FormatInt(r.id, 10)
	return []string{r.l.prefix + "lease:" + id, r.l.prefix + "bound:" + id}
}

func (r *redisLease) Renew(ctx context.Context, bound time.Time) error {
	return r.run(ctx, "Renew", renewScript, r.token, r.ttl.Milliseconds(), bound.UnixNano())
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
	return r.run(ctx, "Release", releaseScript, r.token, ns)
}

func (r *redisLease) run(ctx context.Context, op string, s *redis.Script, args ...any) error {
	keys := r.keys()
	held, err := s.Run(ctx, r.l.rdb, keys, args...).Int64()
	if err != nil {
		return classify(op, keys[0], err)
	}
	if held == 0 {
		return newError(sequence.ErrLeaseLost, nil, "%s: the lease %s is no longer this holder's", op, keys[0])
	}
	return nil
}
