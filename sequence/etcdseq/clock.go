package etcdseq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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

// now returns the Store's clock, the clock of its records: the largest
// time a process sharing the prefix has read, this one's included. It
// raises the clock to this process's time when that is later.
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
