package redisseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// ErrUnsafe means a Redis that an Allocator without a ledger would keep its
// counters in can lose writes it acknowledged: it does not fsync every
// write to an append-only file. Numbers would repeat after a crash.
var ErrUnsafe = errors.New("redisseq: Redis may lose counters")

// onlyRedis is what an Allocator without a ledger checks: the server's
// persistence, once, and the epoch marker it saw.
type onlyRedis struct {
	mu      sync.Mutex
	checked bool
	epoch   string
}

// check refuses a server that may lose writes, and one that has lost the
// epoch this Allocator saw before.
func (o *onlyRedis) check(ctx context.Context, a *Allocator, op, rkey string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.checked {
		if err := persistence(ctx, a.rdb, op, rkey); err != nil {
			return err
		}
		o.checked = true
	}
	key := redisKey(a.prefix, "", ":epoch")
	if o.epoch == "" {
		var b [16]byte
		rand.Read(b[:])
		fresh := hex.EncodeToString(b[:])
		if err := a.rdb.SetNX(ctx, key, fresh, 0).Err(); err != nil {
			return classify(op, rkey, err)
		}
		got, err := a.rdb.Get(ctx, key).Result()
		if err != nil {
			return classify(op, rkey, err)
		}
		o.epoch = got
		return nil
	}
	got, err := a.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) || err == nil && got != o.epoch {
		return newError(sequence.ErrRegressed, nil, "Redis lost the epoch marker %s (it restarted empty or was flushed): its counters may be behind numbers already issued; raise their floors, then start a new Allocator", key)
	}
	if err != nil {
		return classify(op, rkey, err)
	}
	return nil
}

// persistence asks the server whether it fsyncs every write. A server that
// refuses CONFIG (managed services often rename it) is trusted.
func persistence(ctx context.Context, rdb redis.UniversalClient, op, rkey string) error {
	cfg, err := rdb.ConfigGet(ctx, "append*").Result()
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "unknown command") || strings.Contains(err.Error(), "NOPERM") {
			return nil
		}
		return classify(op, rkey, err)
	}
	if cfg["appendonly"] != "yes" || cfg["appendfsync"] != "always" {
		return fmt.Errorf("%w: it runs with appendonly %s and appendfsync %s; without a ledger, Redis must run with appendonly yes and appendfsync always (or give the Allocator a ledger)",
			ErrUnsafe, cfg["appendonly"], cfg["appendfsync"])
	}
	return nil
}
