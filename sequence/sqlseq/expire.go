package sqlseq

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
)

// Mark raises key's high-water mark to at least v and returns it: a
// [sequence.Marker]. It is one statement, as Floor is.
func (s *Store) Mark(ctx context.Context, key string, v int64) (int64, error) {
	if v < 0 {
		return 0, fmt.Errorf("sqlseq: mark %d: %w", v, sequence.ErrInvalidArgument)
	}
	if err := checkKey(key); err != nil {
		return 0, err
	}
	if v == 0 {
		return s.Last(ctx, key)
	}
	id := hash(key)
	var last int64
	var found bool
	err := s.retry(ctx, "mark", func() error {
		var err error
		last, found, err = s.q.floor(ctx, s.db, id, key, v)
		return err
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, s.refused(ctx, key, "a floor")
	}
	return last, nil
}

// Expire deletes key's row once ttl has passed, by the database's clock:
// a [sequence.Expirer]. The deadline is a row of the table of deadlines
// (see [Store.Migrate]); each Expire first deletes, in one transaction,
// every key past its deadline. A ttl <= 0 deletes key's row at once. A
// deleted key's numbers start again at 1.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	id := hash(key)
	return s.retry(ctx, "expire", func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var now any // as the driver gives it, and back to it: one instant for every statement
		if err := tx.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.sweepLedger, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.sweepExpiry, now); err != nil {
			return err
		}
		if ttl <= 0 {
			if _, err := tx.ExecContext(ctx, s.q.deleteKey, id[:]); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q.deleteExpiry, id[:]); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, s.q.setExpiry, id[:], now, ttl.Microseconds()); err != nil {
			return err
		}
		return tx.Commit()
	})
}

var _ interface {
	sequence.Marker
	sequence.Expirer
} = (*Store)(nil)
