package etcdseq

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
)

// The claims of idempotency keys (see [sequence.Replayer]): each under
// prefix+"i/"+key, a JSON memo, attached to an etcd lease that outlives
// it, shared by the claims of an hour, so that etcd deletes them after
// their time without a sweep.

func (s *Store) memoKey(id string) string { return s.prefix + "i/" + id }

// memoLeases caches the lease claims are attached to.
type memoLeases struct {
	mu    sync.Mutex
	id    clientv3.LeaseID
	until time.Time
}

// memoLease returns a lease that lasts at least d more.
func (s *Store) memoLease(ctx context.Context, d time.Duration) (clientv3.LeaseID, error) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	if s.leases.id != 0 && time.Now().Add(d).Before(s.leases.until) {
		return s.leases.id, nil
	}
	ttl := d + time.Hour
	g, err := s.cli.Grant(ctx, int64(ttl/time.Second)+1)
	if err != nil {
		return 0, err
	}
	s.leases.id, s.leases.until = g.ID, time.Now().Add(ttl)
	return g.ID, nil
}

// Claim records or finds a claim on an idempotency key: a
// [sequence.Replayer]. A compare-and-swap on the key's revision makes one
// of two processes claiming at once the holder.
func (s *Store) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	if err := sequence.CheckClaim(id, ""); err != nil {
		return sequence.Claim{}, err
	}
	var c sequence.Claim
	err := s.retry(ctx, "Claim", id, func(ctx context.Context) (bool, error) {
		m, rev, err := s.readMemo(ctx, id)
		if err != nil {
			return false, err
		}
		// Timed by the Store's clock, which the processes sharing it
		// agree on (see Now).
		now, err := s.Now(ctx)
		if err != nil {
			return false, err
		}
		var next *sequence.Memo
		c, next = m.Claim(now, digest, token, lease)
		if next == nil {
			return false, nil
		}
		return s.putMemo(ctx, id, rev, next, lease)
	})
	return c, err
}

// Settle records the answer of a claim: a [sequence.Replayer].
func (s *Store) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	if err := sequence.CheckClaim(id, answer); err != nil {
		return err
	}
	return s.retry(ctx, "Settle", id, func(ctx context.Context) (bool, error) {
		m, rev, err := s.readMemo(ctx, id)
		if err != nil {
			return false, err
		}
		now, err := s.Now(ctx)
		if err != nil {
			return false, err
		}
		next, err := m.Settle(now, token, answer, keep)
		if err != nil {
			return false, fmt.Errorf("etcdseq: settle an idempotency key: %w", err)
		}
		return s.putMemo(ctx, id, rev, next, keep)
	})
}

func (s *Store) readMemo(ctx context.Context, id string) (*sequence.Memo, int64, error) {
	r, err := s.cli.Get(ctx, s.memoKey(id))
	if err != nil || len(r.Kvs) == 0 {
		return nil, 0, err
	}
	var m sequence.Memo
	if err := json.Unmarshal(r.Kvs[0].Value, &m); err != nil {
		return nil, 0, fmt.Errorf("etcdseq: the claim of %.80q: %v: %w", id, err, ErrCorrupt)
	}
	return &m, r.Kvs[0].ModRevision, nil
}

// putMemo writes m if the key is at revision rev still; again is true
// when it was not.
func (s *Store) putMemo(ctx context.Context, id string, rev int64, m *sequence.Memo, d time.Duration) (again bool, err error) {
	v, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	lease, err := s.memoLease(ctx, d)
	if err != nil {
		return false, err
	}
	k := s.memoKey(id)
	t, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", rev)).
		Then(clientv3.OpPut(k, string(v), clientv3.WithLease(lease))).
		Commit()
	if err != nil {
		return false, err
	}
	return !t.Succeeded, nil
}
