package boltseq

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
)

// idemBucket holds the claims of idempotency keys: id -> JSON memo.
var idemBucket = []byte("sn.idem")

// Claim records or finds a claim on an idempotency key, in one durable
// transaction: a [sequence.Replayer]. One Claim in 64 also deletes up to
// 64 claims whose time has passed.
func (s *Store) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	if err := sequence.CheckClaim(id, ""); err != nil {
		return sequence.Claim{}, err
	}
	var c sequence.Claim
	err := s.updateTx(ctx, "claim "+quoteKey(id), func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(idemBucket)
		if err != nil {
			return err
		}
		now := time.Now()
		m, err := s.memo(b, id)
		if err != nil {
			return err
		}
		var next *sequence.Memo
		c, next = m.Claim(now, digest, token, lease)
		if next != nil {
			if err := putMemo(b, id, next); err != nil {
				return err
			}
		}
		if rand.IntN(64) == 0 {
			return sweepMemos(b, now)
		}
		return nil
	})
	return c, err
}

// Settle records the answer of a claim, in one durable transaction: a
// [sequence.Replayer].
func (s *Store) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	if err := sequence.CheckClaim(id, answer); err != nil {
		return err
	}
	return s.updateTx(ctx, "settle "+quoteKey(id), func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(idemBucket)
		if err != nil {
			return err
		}
		m, err := s.memo(b, id)
		if err != nil {
			return err
		}
		next, err := m.Settle(time.Now(), token, answer, keep)
		if err != nil {
			return fmt.Errorf("boltseq: settle %s: %w", quoteKey(id), err)
		}
		return putMemo(b, id, next)
	})
}

func (s *Store) memo(b *bolt.Bucket, id string) (*sequence.Memo, error) {
	v := b.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var m sequence.Memo
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: the claim of %s: %v", ErrCorrupt, s.path, quoteKey(id), err)
	}
	return &m, nil
}

func putMemo(b *bolt.Bucket, id string, m *sequence.Memo) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), v)
}

// sweepMemos deletes up to 64 claims past their time, from a random place
// in the bucket.
func sweepMemos(b *bolt.Bucket, now time.Time) error {
	var start [8]byte
	for i := range start {
		start[i] = byte(rand.IntN(256))
	}
	c := b.Cursor()
	var dead [][]byte
	seen := 0
	for k, v := c.Seek(start[:]); seen < 256 && len(dead) < 64; k, v = c.Next() {
		if k == nil {
			k, v = c.First()
			if k == nil {
				break
			}
		}
		seen++
		var m sequence.Memo
		if json.Unmarshal(v, &m) == nil && m.Until <= now.UnixMicro() {
			dead = append(dead, append([]byte(nil), k...))
		}
	}
	for _, k := range dead {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
