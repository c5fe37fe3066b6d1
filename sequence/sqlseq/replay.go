package sqlseq

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sngen/sn/sequence"
)

// The claims of idempotency keys (see [sequence.Replayer]) live in a
// table beside the ledger, "<table>_idem": the SHA-256 of the key, the
// request's digest, the claim's token, the answer, until when (Unix
// microseconds) and whether it is settled.

// Claim records or finds a claim on an idempotency key, in one
// transaction: a [sequence.Replayer]. One Claim in 64 also deletes up to
// 100 claims whose time has passed.
func (s *Store) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	if err := sequence.CheckClaim(id, ""); err != nil {
		return sequence.Claim{}, err
	}
	h := sha256.Sum256([]byte(id))
	var c sequence.Claim
	err := s.retry(ctx, "claim", func() error {
		// A new key: one statement, which another's insert of the same
		// key makes do nothing. Claims are timed by the database's clock,
		// which every process sharing it agrees on.
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		now, err := s.clock(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q.addMemo, h[:], digest, token, now.Add(lease).UnixMicro())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			c = sequence.Claim{Mine: true, Digest: digest, Until: sequence.FromMicros(now.Add(lease).UnixMicro())}
			return s.commit(ctx, tx, after)
		}
		tx.Rollback()
		return s.memoTx(ctx, h, func(tx *sql.Tx, m *sequence.Memo) (*sequence.Memo, error) {
			now, err := s.clock(ctx, tx)
			if err != nil {
				return nil, err
			}
			var next *sequence.Memo
			c, next = m.Claim(now, digest, token, lease)
			return next, nil
		})
	})
	if err == nil && rand.IntN(64) == 0 {
		if now, err := s.clock(ctx, s.db); err == nil {
			_, _ = s.db.ExecContext(ctx, s.q.sweepMemos, now.UnixMicro())
		}
	}
	return c, err
}

// Settle records the answer of a claim, in one transaction: a
// [sequence.Replayer].
func (s *Store) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	if err := sequence.CheckClaim(id, answer); err != nil {
		return err
	}
	h := sha256.Sum256([]byte(id))
	return s.retry(ctx, "settle", func() error {
		return s.memoTx(ctx, h, func(tx *sql.Tx, m *sequence.Memo) (*sequence.Memo, error) {
			now, err := s.clock(ctx, tx)
			if err != nil {
				return nil, err
			}
			next, err := m.Settle(now, token, answer, keep)
			if err != nil {
				return nil, fmt.Errorf("sqlseq: settle an idempotency key: %w", err)
			}
			return next, nil
		})
	})
}

// clock reads the database's clock through q.
func (s *Store) clock(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (time.Time, error) {
	var us int64
	if err := q.QueryRowContext(ctx, s.q.nowMicros).Scan(&us); err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us), nil
}

// memoTx locks the claim of h, gives it to fn, and writes what fn
// returns, if anything, in one transaction.
func (s *Store) memoTx(ctx context.Context, h [32]byte, fn func(tx *sql.Tx, m *sequence.Memo) (*sequence.Memo, error)) error {
	tx, after, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var m sequence.Memo
	var done int
	var mp *sequence.Memo
	err = tx.QueryRowContext(ctx, s.q.lockMemo, h[:]).Scan(&m.Digest, &m.Token, &m.Answer, &m.Until, &done)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		m.Done = done != 0
		mp = &m
	}
	next, err := fn(tx, mp)
	if err != nil || next == nil {
		return err
	}
	d := 0
	if next.Done {
		d = 1
	}
	if mp == nil {
		_, err = tx.ExecContext(ctx, s.q.putMemo, h[:], next.Digest, next.Token, next.Answer, next.Until, d)
	} else {
		_, err = tx.ExecContext(ctx, s.q.setMemo, next.Digest, next.Token, next.Answer, next.Until, d, h[:])
	}
	if err != nil {
		return err
	}
	return s.commit(ctx, tx, after)
}
