package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Expire deletes key's row once ttl has passed, by the database's clock:
// a [sequence.Expirer]. The deadline is a row of the table of deadlines
// (see [Store.Migrate]); each Expire first deletes, in one transaction,
// every key past its deadline. A ttl <= 0 deletes key's row at once. A
// deleted key's counter is gone, but its journal keeps its head and
// refuses to draw from it again (journal.ErrBehind): its numbers would be
// issued twice.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	id := hash(key)
	return s.retry(ctx, "expire", func() error {
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var now any // as the driver gives it, and back to it: one instant for every statement
		if err := tx.QueryRowContext(ctx, s.q.now).Scan(&now); err != nil {
			return err
		}
		// The key's own deadline first, so that the sweep after it does
		// not delete a key this call gives more time.
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
		if _, err := tx.ExecContext(ctx, s.q.sweepLedger, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.sweepExpiry, now); err != nil {
			return err
		}
		return s.commit(ctx, tx, after)
	})
}

var _ interface {
	sequence.Expirer
	sequence.Returner
} = (*Store)(nil)

// Return lowers key's high-water mark from r.Last to r.First-1 when it is
// r.Last still and no floor at or above r.First was raised (the mark of
// the row of key "|floor", which Floor raises first), in one statement: a
// [sequence.Returner]. A Segment returns
// its unused blocks at Close this way.
func (s *Store) Return(ctx context.Context, key string, r sequence.Range) (bool, error) {
	if r.First < 1 || r.Len() == 0 {
		return false, fmt.Errorf("sqlseq: return %v of key %q: an empty range: %w", r, key, sequence.ErrInvalidArgument)
	}
	if err := checkKey(key); err != nil {
		return false, err
	}
	fid := hash(floorKey(key))
	done := false
	_, err := s.journaled(ctx, "return", key, func(_ execer, last, _ int64) (int64, []journal.Event, error) {
		done = false
		if last != r.Last {
			return last, nil, nil
		}
		var floor int64
		err := s.db.QueryRowContext(ctx, s.q.read, fid[:]).Scan(new([]byte), &floor)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, nil, err
		}
		if floor >= r.First {
			return last, nil, nil // a floor was raised into r: it stays reserved
		}
		done = true
		return r.First - 1, []journal.Event{{Kind: journal.Returned, Range: r}}, nil
	})
	return done && err == nil, err
}

// floorKey is the key of the row that records key's highest floor: "|"
// and "floor" end no counter key sn makes (a period has digits, a key=
// component an "=").
func floorKey(key string) string { return key + "|floor" }
