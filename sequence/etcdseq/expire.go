package etcdseq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
)

// etcd has no clock a client can read, and a lease's time is not one: a
// new leader gives every lease its whole TTL again. So the Store keeps a
// clock of its own in the cluster, by which it keeps the deadlines of
// Expire and answers Now: the largest time any process sharing the prefix
// has read from its own clock, raised with a compare-and-swap at each
// reading. It never goes back, whatever a process's clock does; a process
// whose clock is ahead pushes it ahead for all, which makes counters expire
// early and sn refuse instants it thinks too old (ErrInstant), never
// draw from a counter that was deleted. Keep the processes' clocks in step.

// clockKey returns the key of the Store's clock.
func (s *Store) clockKey() string { return s.prefix + "clock" }

// deadlineKey returns the key of key's expiry deadline.
func (s *Store) deadlineKey(key string) string { return s.prefix + "x/" + key }

// now returns the Store's clock: the largest time a process sharing the
// prefix has read, this one's included (see the package doc), the clock of its records. It raises the clock to this process's time when that
// is later.
func (s *Store) now(ctx context.Context) (time.Time, error) {
	k := s.clockKey()
	var now int64
	err := s.retry(ctx, "Now", "", func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, k)
		if err != nil {
			return false, err
		}
		var stored, rev int64
		if len(r.Kvs) > 0 {
			if stored, err = strconv.ParseInt(string(r.Kvs[0].Value), 10, 64); err != nil {
				return false, fmt.Errorf("etcdseq: the clock holds %.40q: %w", r.Kvs[0].Value, ErrCorrupt)
			}
			rev = r.Kvs[0].ModRevision
		}
		local := time.Now().UnixMicro()
		if local <= stored {
			now = stored
			return false, nil
		}
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", rev)).
			Then(clientv3.OpPut(k, strconv.FormatInt(local, 10))).
			Commit()
		if err != nil {
			return false, err
		}
		if !t.Succeeded {
			return true, nil // another process moved the clock: read it again
		}
		now = local
		return false, nil
	})
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(now), nil
}

// Expire deletes key's counter once ttl has passed by the Store's clock
// (the clock of its records): a [sequence.Expirer]. The deadline is a key of its own;
// each Expire first deletes every counter past its deadline, each with its
// deadline in one transaction that holds only if the deadline has not
// changed since it was read. A ttl <= 0 deletes key's counter at once. A
// deleted key's numbers start again at 1.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey("Expire", key); err != nil {
		return err
	}
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	if err := s.sweep(ctx, now); err != nil {
		return err
	}
	if ttl <= 0 {
		return s.retry(ctx, "Expire", key, func(ctx context.Context) (bool, error) {
			_, err := s.cli.Txn(ctx).Then(clientv3.OpDelete(s.counter(key)), clientv3.OpDelete(s.deadlineKey(key))).Commit()
			return false, err
		})
	}
	deadline := now.Add(ttl).UnixMicro()
	return s.retry(ctx, "Expire", key, func(ctx context.Context) (bool, error) {
		_, err := s.cli.Put(ctx, s.deadlineKey(key), strconv.FormatInt(deadline, 10))
		return false, err
	})
}

// sweep deletes the counters whose deadline is at or before now.
func (s *Store) sweep(ctx context.Context, now time.Time) error {
	prefix := s.prefix + "x/"
	var r *clientv3.GetResponse
	err := s.retry(ctx, "Expire", "", func(ctx context.Context) (bool, error) {
		var err error
		r, err = s.cli.Get(ctx, prefix, clientv3.WithPrefix())
		return false, err
	})
	if err != nil {
		return err
	}
	for _, kv := range r.Kvs {
		d, err := strconv.ParseInt(string(kv.Value), 10, 64)
		if err != nil {
			return fmt.Errorf("etcdseq: the deadline %q holds %.40q: %w", kv.Key, kv.Value, ErrCorrupt)
		}
		if d > now.UnixMicro() {
			continue
		}
		key := string(kv.Key[len(prefix):])
		dk, rev := string(kv.Key), kv.ModRevision
		err = s.retry(ctx, "Expire", key, func(ctx context.Context) (bool, error) {
			// Only the deadline read: a later Expire of the key set a new one.
			_, err := s.cli.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(dk), "=", rev)).
				Then(clientv3.OpDelete(s.counter(key)), clientv3.OpDelete(dk)).
				Commit()
			return false, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

var _ sequence.Expirer = (*Store)(nil)
