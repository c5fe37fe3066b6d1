package claim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// Records over a store's records, written once for every store:
//
//	i/ID                the claim of idempotency key ID, a JSON Memo
//	ix/UNTIL/HASH       the claim's place in the sweep: UNTIL, in 20
//	                    digits of Unix microseconds, is when it may be
//	                    deleted; the value is its key
//
// A claim under way stays for claimLinger past its lease, so that a call
// that settles late, when nobody took the key over, still records its
// answer; a settled one until its keep has passed. Records and settles
// sweep the index now and then.

// claimLinger is how long a claim that was not settled stays in a store
// after its lease has passed.
const claimLinger = 24 * time.Hour

// Records returns the [Replayer] that keeps idempotency claims in s, timed
// by its clock: what every store whose records are shared keeps them in.
func Records(s record.Store) Replayer { return claims{s} }

type claims struct{ s record.Store }

// Of returns the Replayer of g: g itself when it is one, or the
// claims in the records of its store; nil when it keeps neither.
func Of(g any) Replayer {
	if r, ok := g.(Replayer); ok {
		return r
	}
	if s := record.Of(g); s != nil {
		return Records(s)
	}
	return nil
}

// claimKey is the record of the claim of id: checkClaim keeps an id short
// enough for a key.
func claimKey(id string) string { return "i/" + id }

// sweepKey is the place in the sweep of the claim at key, to be deleted
// at us.
func sweepKey(key string, us int64) string {
	h := sha256.Sum256([]byte(key))
	return fmt.Sprintf("ix/%020d/%s", max(us, 0), hex.EncodeToString(h[:16]))
}

// Ops returns the writes that record m as the claim of id, with its
// place in the sweep: what a store's migration of an earlier layout
// writes.
func Ops(id string, m Memo) []record.Op {
	k := claimKey(id)
	v, _ := json.Marshal(m)
	return []record.Op{record.Put(k, v), record.Put(sweepKey(k, m.gone()), []byte(k))}
}

// gone is when the memo may be deleted, in Unix microseconds.
func (m Memo) gone() int64 {
	if m.Done {
		return m.Until
	}
	return m.Until + claimLinger.Microseconds()
}

// memo reads the claim at key in tx; nil if there is none.
func memo(tx *record.Tx, key string) (*Memo, error) {
	r, err := tx.Get1(key)
	if err != nil || !r.Exists() {
		return nil, err
	}
	var m Memo
	if err := json.Unmarshal(r.Value, &m); err != nil {
		return nil, fmt.Errorf("claim: the claim %.80q holds %.80q: %w", key, r.Value, errCorruptClaim)
	}
	return &m, nil
}

var errCorruptClaim = errors.New("not a claim")

// put writes next as the claim at key in tx, in place of old.
func put(tx *record.Tx, key string, old, next *Memo) {
	if old != nil {
		tx.Delete(sweepKey(key, old.gone()))
	}
	v, _ := json.Marshal(next)
	tx.Put(key, v)
	tx.Put(sweepKey(key, next.gone()), []byte(key))
}

func (c claims) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (Claim, error) {
	if err := checkClaim(id, ""); err != nil {
		return Claim{}, err
	}
	k := claimKey(id)
	var out Claim
	var now time.Time
	err := record.Update(ctx, c.s, func(tx *record.Tx) error {
		m, err := memo(tx, k)
		if err != nil {
			return err
		}
		if now, err = tx.Now(); err != nil {
			return err
		}
		var next *Memo
		if out, next = m.Claim(now, digest, token, lease); next != nil {
			put(tx, k, m, next)
		}
		return nil
	})
	if err == nil && rand.IntN(64) == 0 {
		c.sweep(ctx, now)
	}
	return out, err
}

func (c claims) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	if err := checkClaim(id, answer); err != nil {
		return err
	}
	k := claimKey(id)
	return record.Update(ctx, c.s, func(tx *record.Tx) error {
		m, err := memo(tx, k)
		if err != nil {
			return err
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		next, err := m.Settle(now, token, answer, keep)
		if err != nil {
			return fmt.Errorf("claim: settle an idempotency key: %w", err)
		}
		if next != m {
			put(tx, k, m, next)
		}
		return nil
	})
}

// sweep deletes up to 100 claims whose time has passed by now. It is best
// effort: what it leaves, a later one deletes.
func (c claims) sweep(ctx context.Context, now time.Time) {
	rs, err := c.s.Scan(ctx, "ix/", fmt.Sprintf("ix/%020d", now.UnixMicro()+1), 100)
	if err != nil {
		return
	}
	for _, r := range rs {
		_ = record.Update(ctx, c.s, func(tx *record.Tx) error {
			ix, err := tx.Get1(r.Key)
			if err != nil || !ix.Exists() {
				return err
			}
			k := string(ix.Value)
			m, err := memo(tx, k)
			if err != nil {
				return err
			}
			tx.Delete(r.Key)
			if m != nil && m.gone() <= now.UnixMicro() {
				tx.Delete(k)
			}
			return nil
		})
	}
}
