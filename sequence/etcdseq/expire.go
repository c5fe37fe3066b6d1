package etcdseq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
)

// deadlineKey returns the key of key's expiry deadline.
func (s *Store) deadlineKey(key string) string { return s.prefix + "x/" + key }

// Expire deletes key's counter once ttl has passed by the Store's clock
// (the clock of its records): a [sequence.Expirer]. The deadline is a key of its own;
// each Expire first deletes every counter past its deadline, each with its
// deadline in one transaction that holds only if the deadline has not
// changed since it was read. A ttl <= 0 deletes key's counter at once. A
// deleted key's counter is gone, but its journal keeps its head and
// refuses to draw from it again (journal.ErrBehind): its numbers would be
// issued twice.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey("Expire", key); err != nil {
		return err
	}
	now, err := s.now(ctx)
	if err != nil {
		return err
	}
	// The key's own deadline first, so that the sweep after it does not
	// delete a key this call gives more time.
	if ttl <= 0 {
		err = s.retry(ctx, "Expire", key, func(ctx context.Context) (bool, error) {
			_, err := s.cli.Txn(ctx).Then(clientv3.OpDelete(s.counter(key)), clientv3.OpDelete(s.deadlineKey(key))).Commit()
			return false, err
		})
	} else {
		deadline := now.Add(ttl).UnixMicro()
		err = s.retry(ctx, "Expire", key, func(ctx context.Context) (bool, error) {
			_, err := s.cli.Put(ctx, s.deadlineKey(key), strconv.FormatInt(deadline, 10))
			return false, err
		})
	}
	if err != nil {
		return err
	}
	return s.sweep(ctx, now)
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
