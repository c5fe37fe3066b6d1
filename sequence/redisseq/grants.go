package redisseq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Grants: an Allocator in front of a ledger reserves ranges from the
// ledger for the cache (a Cached record in the ledger's journal), and
// hands blocks of them to the processes it serves from Redis, one script
// per block. The script appends the block and the process it went to
// ([journal.ByOf], a Segment's name) to a list beside the range, in the
// same hash slot: "count last holder". A Return appends the numbers that
// went back to the cache the same way, its holder the cache. The list is
// moved into the ledger's journal as Handed records, in order, under a
// lock, through a list of those being recorded (so that a flusher killed
// midway leaves them to the next, which writes those not written yet):
// after each refill, before any record a process notes (its
// Closed, its releases, a void), and before the journal is read from its
// start. So the journal names the process that holds every block, and
// sn gaps over Redis counts what each process was handed: issued once it
// closed, open (and whose) when it was killed. A list lost with Redis's
// data leaves its numbers with the cache: open, bounded by the range.
// (The empty key has no grants: "{}" is no hash tag, so its list could
// not be in its range's slot. sn makes no empty key.)

// flushTTL is how long the flush lock of a key lives if its holder stops
// (killed): a process noting a record waits for it at most that long,
// within a Segment's FetchTimeout. The holder refreshes it as it writes.
const flushTTL = 2 * time.Second

// cacheName names the cache in the ledger's journal.
func (c *Counter) cacheName() string { return "redis cache " + c.prefix }

// grantsKey is the Redis key of key's list of grants.
func (c *Counter) grantsKey(key string) string { return redisKey(c.prefix, key, ":grants") }

// takeGrantsScript moves the list KEYS[1] to the list KEYS[2], the
// grants being recorded, and returns it.
var takeGrantsScript = redis.NewScript(`
local v = redis.call('LRANGE', KEYS[1], 0, -1)
if #v > 0 then
	redis.call('DEL', KEYS[1])
	for i = 1, #v, 1000 do
		redis.call('RPUSH', KEYS[2], unpack(v, i, math.min(i + 999, #v)))
	end
end
return v
`)

// idleGrantsScript returns 1 when the lists KEYS[1] and KEYS[3] are empty
// and the lock KEYS[2] is not held.
var idleGrantsScript = redis.NewScript(`
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 and redis.call('LLEN', KEYS[3]) == 0 then
	return 1
end
return 0
`)

// grant is an entry of the list of grants.
type grant struct {
	r      sequence.Range
	holder string
}

func parseGrant(s string) (grant, bool) {
	parts := strings.SplitN(s, " ", 3)
	if len(parts) != 3 || parts[2] == "" {
		return grant{}, false
	}
	n, err1 := strconv.ParseInt(parts[0], 10, 64)
	last, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || n < 1 || last < n {
		return grant{}, false
	}
	return grant{r: sequence.Range{First: last - n + 1, Last: last}, holder: parts[2]}, true
}

// flush moves key's grants from Redis into the ledger's journal, when
// there are any, under a lock that keeps them in order.
func (c *Counter) flush(ctx context.Context, key string) error {
	j := journal.Of(c.durable)
	if j == nil {
		return nil
	}
	gk, lk, pk := c.grantsKey(key), redisKey(c.prefix, key, ":flush"), c.grantsKey(key)+":pending"
	// Nothing to record, and nobody recording: done. (Another process
	// that popped the grants and is writing them holds the lock: wait for
	// it, so that what the caller notes next follows them.)
	if n, err := idleGrantsScript.Run(ctx, c.rdb, []string{gk, lk, pk}).Int64(); err != nil || n == 1 {
		return classify("flush the grants of", gk, err)
	}
	lock, err := NewLock(c.rdb, lk, flushTTL)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		ok, err := lock.TryLock(ctx)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if err := sleep(ctx, backoff(c.retry, 64*c.retry, attempt)); err != nil {
			return classify("flush the grants of", gk, err)
		}
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		lock.Unlock(uctx)
		cancel()
	}()
	// A flusher that stopped (killed) between taking the grants and
	// recording them all left them pending: record those it did not.
	pending, err := c.rdb.LRange(ctx, pk, 0, -1).Result()
	if err != nil {
		return classify("flush the grants of", pk, err)
	}
	if len(pending) > 0 {
		if err := c.record(ctx, j, lock, key, pending, true); err != nil {
			return err
		}
		if err := c.rdb.Del(ctx, pk).Err(); err != nil {
			return classify("flush the grants of", pk, err)
		}
	}
	raw, err := takeGrantsScript.Run(ctx, c.rdb, []string{gk, pk}).StringSlice()
	if err != nil {
		return classify("flush the grants of", gk, err)
	}
	if len(raw) == 0 {
		return nil
	}
	if err := c.record(ctx, j, lock, key, raw, false); err != nil {
		return err
	}
	return classify("flush the grants of", pk, c.rdb.Del(ctx, pk).Err())
}

// record writes the grants raw to key's journal j as Handed records, a run
// of one holder's consecutive blocks a record. With again set, they may
// have been written already, by a flusher that stopped before it could
// say so: those found among the last records of the journal are not
// written twice.
func (c *Counter) record(ctx context.Context, j journal.Keeper, lock *Lock, key string, raw []string, again bool) error {
	var gs []grant
	for _, s := range raw {
		g, ok := parseGrant(s)
		if !ok {
			continue // not written by this package: nothing to record
		}
		if n := len(gs); n > 0 && gs[n-1].holder == g.holder && gs[n-1].r.Last+1 == g.r.First {
			gs[n-1].r.Last = g.r.Last
			continue
		}
		gs = append(gs, g)
	}
	written := map[grant]bool{}
	if again {
		head, err := j.Head(ctx, key)
		if err != nil {
			return err
		}
		tail, err := j.Events(ctx, key, max(0, head.Seq-int64(2*len(gs)+16)), 2*len(gs)+16)
		if err != nil {
			return err
		}
		for _, e := range tail {
			if e.Kind == journal.Handed {
				written[grant{r: e.Range, holder: e.Actor}] = true
			}
		}
	}
	var todo []journal.Event
	for _, g := range gs {
		if !written[grant{r: g.r, holder: g.holder}] {
			todo = append(todo, journal.Event{Kind: journal.Handed, Range: g.r, Actor: g.holder})
		}
	}
	// A ledger that takes many records in one transaction (sqlseq) takes
	// a few hundred a round; another, one.
	note, size := func(es []journal.Event) error {
		_, err := j.Note(ctx, key, es[0])
		return err
	}, 1
	if all, ok := j.(interface {
		NoteAll(ctx context.Context, key string, es []journal.Event) ([]journal.Event, error)
	}); ok {
		note, size = func(es []journal.Event) error {
			_, err := all.NoteAll(ctx, key, es)
			return err
		}, 500
	}
	refreshed := time.Now()
	for len(todo) > 0 {
		if time.Since(refreshed) > flushTTL/4 {
			// Still the flusher: a lock lost means another took over.
			if err := lock.Refresh(ctx); err != nil {
				return err
			}
			refreshed = time.Now()
		}
		n := min(len(todo), size)
		if err := note(todo[:n]); err != nil {
			return fmt.Errorf("redisseq: record in the ledger's journal to whom the cache handed %v of key %q (%d blocks): %w", todo[0].Range, key, n, err)
		}
		todo = todo[n:]
	}
	return nil
}

// flushLater flushes key's grants in the background, after a refill.
func (c *Counter) flushLater(key string) {
	ctx, cancel := context.WithTimeout(journal.WithBy(context.Background(), c.cacheName()), time.Minute)
	defer cancel()
	_ = c.flush(ctx, key)
}
