package redisseq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from Redis: a [snowflake.Leaser].
//
// It is the [snowflake.RecordLeaser] over the records of the Redis
// ([Leaser.Records]): each id of a name is a record holding a random
// token, the holder's; a deadline by the server's clock, never a
// client's; and the bound, the last instant its holders may have issued
// at. Taking, renewing and releasing an id are each one script that the
// id's record did not change under. A new holder issues only after the
// bound, so the ids of two holders of one id never meet. An id found
// without a bound (never used, or Redis lost it) is issued with only
// after one TTL (see snowflake.New), so a Lease prefers an id a holder
// released, whose bound is known. Redis losing its data (restarted
// empty, flushed) loses the records, and their versions are never given
// again: a holder's next renewal fails (sequence.ErrLeaseLost) and it
// stops issuing.
//
// The bound is what keeps ids unique across restarts, so Redis must not
// lose it: as for [NewRedisOnlyAllocator], every read and write of the
// records refuses, with an error wrapping [ErrUnsafe], a server that does
// not fsync every write (appendonly yes, appendfsync always) or that may
// evict keys (maxmemory-policy other than noeviction). Replication is
// asynchronous: set [LeaserOptions.Replicas] when a failover may promote a
// replica.
//
// An earlier release kept each name's ids in keys of their own (see
// [Leaser.Lease]); each Lease fences them, and adopts those in use.
type Leaser struct {
	rdb      redis.UniversalClient
	prefix   string // the earlier release's keys of the name, ending in the hash tag
	base     string // the prefix of LeaserOptions: the store's, for its records
	replicas replicas
	only     onlyRedis
	l        *snowflake.RecordLeaser
}

// LeaserOptions configure a [Leaser].
type LeaserOptions struct {
	// Prefix is the prefix of the Leaser's keys; "" means DefaultPrefix.
	// Every Gen that may share worker ids must use the same prefix.
	Prefix string
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes; "" means
	// "snowflake". A name is recorded with its layout, and a Lease with
	// another layout is refused.
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

// NewLeaser returns a Leaser over c. A nil c, or a Name longer than 255
// bytes, is an error wrapping [sequence.ErrInvalidArgument].
func NewLeaser(c redis.UniversalClient, o LeaserOptions) (*Leaser, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: redisseq.NewLeaser with a nil client", sequence.ErrInvalidArgument)
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	l := &Leaser{
		rdb:      c,
		prefix:   redisKey(prefixOrDefault(o.Prefix), "worker:"+o.Name, ":"),
		base:     prefixOrDefault(o.Prefix),
		replicas: newReplicas(o.Replicas, o.ReplicaTimeout),
	}
	var err error
	if l.l, err = snowflake.NewRecordLeaser(l.Records(), o.Name); err != nil {
		return nil, err
	}
	return l, nil
}

// Lease takes a free worker id below layout.Workers() for ttl (see
// [snowflake.RecordLeaser.Lease]). It returns an error wrapping
// snowflake.ErrLayout when the name was recorded with another layout,
// [ErrUnsafe] for a server that may lose the bounds, and
// sequence.ErrUnavailable when every id is held.
//
// Each Lease first fences the ids an earlier release kept in keys of
// their own (P{worker:NAME}:lease:ID, with an expiry, and :bound:ID), in
// one script: it sets the name's layout key to a value no layout has, so
// that a Lease of that release refuses, and its epoch marker too, so that
// a renewal of that release fails and its holder stops issuing; and it
// returns the ids a process of that release may still hold, which the
// Lease adopts in the records, each held for what was left of its expiry
// and a second, with its bound, before it takes one. Redis losing the
// fence (FLUSHALL) lets a process of that release lease again until the
// next Lease here, which fences again and adopts what it took.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if err := l.move(ctx, layout); err != nil {
		return nil, err
	}
	return l.l.Lease(ctx, layout, ttl)
}

// movedLayout is what the layout key of an earlier release holds once
// its ids are in the records.
const movedLayout = "moved to the records: upgrade every process of sn"

// moveScript fences the keys of an earlier release under ARGV[1] (see
// Leaser.Lease), keeping the layout they had, and returns that layout
// ("" for none) and, for each id that a process of that release may
// still hold, the id, the lease's expiry in ms (-2 for none) and the
// bound. When it fences (the first time, or again after Redis lost the
// fence), those are the ids below ARGV[2] that have a lease or a bound,
// and it keeps the ids with a lease in the set "pending"; once fenced,
// they are the pending ids whose lease has not lapsed: no process of
// that release takes an id behind the fence.
var moveScript = redis.NewScript(`
local p, n, moved = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local lay = redis.call('GET', p .. 'layout')
local out = {}
if lay ~= moved then
	if lay then redis.call('SET', p .. 'layout-was', lay) end
	redis.call('SET', p .. 'layout', moved)
	redis.call('SET', p .. 'epoch', moved)
	for id = 0, n - 1 do
		local t = redis.call('PTTL', p .. 'lease:' .. id)
		local b = redis.call('GET', p .. 'bound:' .. id)
		if t > 0 then redis.call('SADD', p .. 'pending', id) end
		if t > 0 or b then
			out[#out + 1] = tostring(id)
			out[#out + 1] = tostring(t)
			out[#out + 1] = b or ''
		end
	end
else
	for _, id in ipairs(redis.call('SMEMBERS', p .. 'pending')) do
		local t = redis.call('PTTL', p .. 'lease:' .. id)
		if t > 0 then
			out[#out + 1] = id
			out[#out + 1] = tostring(t)
			out[#out + 1] = redis.call('GET', p .. 'bound:' .. id) or ''
		else
			redis.call('SREM', p .. 'pending', id)
		end
	end
end
table.insert(out, 1, redis.call('GET', p .. 'layout-was') or '')
return out
`)

// move fences the ids of an earlier release, and adopts in the records
// those its processes may still hold, before each Lease: Redis may have
// lost the fence since the last (FLUSHALL, a replica that lagged).
func (l *Leaser) move(ctx context.Context, layout snowflake.Layout) error {
	if layout.WorkerBits < 0 || layout.WorkerBits > 30 {
		return nil // a layout Lease refuses
	}
	if err := l.only.checkClient(ctx, l.rdb, "Lease", l.prefix); err != nil {
		return err
	}
	// That release leased at most 2^20 ids of a name.
	res, err := l.replicas.scriptKeys(ctx, l.rdb, moveScript, []string{l.prefix}, l.prefix, min(layout.Workers(), 1<<20), movedLayout).StringSlice()
	if err != nil {
		return classify("Lease: move the leases of an earlier release", l.prefix, err)
	}
	if len(res) == 0 || len(res)%3 != 1 {
		return newError(ErrCorrupt, nil, "Lease: the script that moves the leases of an earlier release returned %d values", len(res))
	}
	if res[0] != "" || len(res) > 1 {
		recs := l.Records()
		now, err := recs.Now(ctx)
		if err != nil {
			return err
		}
		err = record.Update(ctx, recs, func(tx *record.Tx) error {
			// The layout, where snowflake.MoveLayouts finds one of
			// sn's records below.
			lk := "r/snowflake layout " + l.l.Name()
			r, err := tx.Get1(lk)
			if err != nil {
				return err
			}
			if !r.Exists() && res[0] != "" {
				tx.Put(lk, []byte(res[0]))
			}
			for i := 1; i < len(res); i += 3 {
				id, err1 := strconv.ParseInt(res[i], 10, 64)
				ms, err2 := strconv.ParseInt(res[i+1], 10, 64)
				if err1 != nil || err2 != nil {
					return newError(ErrCorrupt, nil, "Lease: the lease %s%s of an earlier release: %q, %q", l.prefix, res[i], res[i], res[i+1])
				}
				var deadline, bound time.Time
				if ms > 0 {
					deadline = now.Add(time.Duration(ms)*time.Millisecond + time.Second)
				}
				if b := res[i+2]; b != "" && b != "0" {
					ns, err := strconv.ParseInt(b, 10, 64)
					if err != nil {
						return newError(ErrCorrupt, err, "Lease: %sbound:%d holds %q, not nanoseconds", l.prefix, id, b)
					}
					bound = time.Unix(0, ns)
				}
				if err := l.l.Adopt(tx, id, deadline, bound); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := snowflake.MoveLayouts(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

var _ snowflake.Leaser = (*Leaser)(nil)
