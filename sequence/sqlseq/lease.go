package sqlseq

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from the ledger's database: a
// [snowflake.Leaser], the counterpart of redisseq.NewLeaser for
// deployments whose shared store is PostgreSQL or MySQL.
//
// Each id of a name is a row of the table of leases (the ledger's name and
// "_workers", created by [Store.Migrate]): a random token, the holder's; a
// deadline; and the bound, the last instant its holders may have issued
// at. Deadlines are computed and compared by the database's clock only
// (its now plus the ttl), never a client's, so that machines whose clocks
// disagree agree on who holds an id. Bounds are the holders' own instants,
// so their clocks must still agree within TTL/2 (see package snowflake). An id is free when it has no row or
// its deadline has passed. Taking one is a single conditional statement
// (PostgreSQL) or a conditional UPDATE of a row that locks it (MySQL),
// read back by its token: of two processes that try at once, one gets
// it.
//
// A renewal extends the deadline only while the token still holds the row
// and the deadline has not passed: a lease that expired is lost, even
// when no one has taken its id since, as a Gen's safety assumes (it stops
// issuing long before, see snowflake.Options.TTL). The bound is raised by
// each renewal and never lowered, except by Release, which sets it to the
// end of the holder's last id, and never below the bound the holder found.
// A new holder issues only after the bound, so the ids of two holders of
// one id never meet, even when the first is still running and cut off from
// the database, and a process that restarts after its clock went back
// does not issue at instants already used.
//
// The bound is what keeps ids unique across restarts: it is as durable as
// the database's commits (do not turn off PostgreSQL's synchronous_commit
// or InnoDB's innodb_flush_log_at_trx_commit=1 for this database).
// A Leaser is safe for concurrent use.
type Leaser struct {
	s    *Store
	name string
}

// LeaserOptions configure a [Leaser]. The zero value gives the
// defaults.
type LeaserOptions struct {
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes.
	// default: "snowflake".
	Name string
}

// maxLeaseName is the longest Name, in bytes: the width of the column.
const maxLeaseName = 255

// NewLeaser returns a Leaser over the Store's database. The table of
// leases must exist: see [Store.Migrate]. A nil s is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLeaser(s *Store, o LeaserOptions) (*Leaser, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: sqlseq.NewLeaser with a nil Store", sequence.ErrInvalidArgument)
	}
	if o.Name == "" {
		o.Name = "snowflake"
	}
	return &Leaser{s: s, name: o.Name}, nil
}

// table names the table of leases in messages.
func (l *Leaser) table() string { return l.s.table + "_workers" }

// Lease takes a free worker id below layout.Workers() for ttl: one a
// holder released (its bound is known, so a Gen issues with it at once)
// if there is one, else the first free one from a random id on. The first
// Lease of a name records its layout; a Lease with another layout returns
// an error wrapping snowflake.ErrLayout. Lease returns an error wrapping
// [sequence.ErrUnavailable] when every id is held (or the database cannot
// be reached), and one wrapping [sequence.ErrInvalidArgument] for a ttl
// under 1ms or a Name longer than 255 bytes.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if layout.WorkerBits < 0 || layout.WorkerBits > 30 || ttl < time.Millisecond || len(l.name) > maxLeaseName {
		return nil, fmt.Errorf("sqlseq: Lease(%d worker bits, ttl %v) of name %.40q (%d bytes, at most %d): want 0 to 30 worker bits and a ttl of at least 1ms: %w",
			layout.WorkerBits, ttl, l.name, len(l.name), maxLeaseName, sequence.ErrInvalidArgument)
	}
	workers := layout.Workers()
	name := []byte(l.name)
	if err := l.checkLayout(ctx, layout.String()); err != nil {
		return nil, err
	}
	held := map[int64]bool{}
	var released []int64
	err := l.s.retry(ctx, "lease: read the held worker ids", func() error {
		clear(held)
		released = released[:0]
		for _, q := range []string{l.s.q.heldWorkers, l.s.q.releasedWorkers} {
			rows, err := l.s.db.QueryContext(ctx, q, name, workers)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				if q == l.s.q.heldWorkers {
					held[id] = true
				} else {
					released = append(released, id)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var tok [16]byte
	rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	start, _ := rand.Int(rand.Reader, big.NewInt(workers))
	for k := range int64(len(released)) + workers {
		if int64(len(held)) >= workers {
			break
		}
		var id int64
		if k < int64(len(released)) {
			id = released[k]
		} else {
			id = (start.Int64() + k - int64(len(released))) % workers
		}
		if held[id] {
			continue
		}
		var bound int64
		var ok bool
		err := l.s.write(ctx, "lease a worker id", func(tx *sql.Tx) error {
			var err error
			bound, ok, err = l.s.q.takeWorker(ctx, tx, name, id, token, ttl.Microseconds())
			return err
		})
		if err != nil {
			return nil, err
		}
		if !ok {
			held[id] = true // another process took it since the read
			continue
		}
		return &sqlLease{l: l, name: name, id: id, token: token, ttl: ttl, bound: bound}, nil
	}
	return nil, fmt.Errorf("sqlseq: Lease: all %d worker ids of %q (table %s) are held: %w", workers, l.name, l.table(), sequence.ErrUnavailable)
}

// checkLayout records layout as the name's, unless it has one, and
// refuses another.
func (l *Leaser) checkLayout(ctx context.Context, layout string) error {
	got, err := sequence.Remember(ctx, l.s, "snowflake layout "+l.name, layout)
	if err != nil {
		return err
	}
	if got != layout {
		return fmt.Errorf("sqlseq: Lease: the worker ids of %q (table %s) were leased with the layout %q; this Gen's is %q. Ids of two layouts can meet: give this one a name of its own (LeaserOptions.Name): %w",
			l.name, l.table(), got, layout, snowflake.ErrLayout)
	}
	return nil
}

// sqlLease is one holding of a worker id.
type sqlLease struct {
	l     *Leaser
	name  []byte
	id    int64
	token string
	ttl   time.Duration
	bound int64 // the bound the id had when taken, in nanoseconds; 0 for none
}

// Worker returns the id held.
func (r *sqlLease) Worker() int64 { return r.id }

// Bound returns the bound the id's earlier holders recorded, or the zero
// time.
func (r *sqlLease) Bound() time.Time {
	if r.bound == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.bound)
}

// Renew extends the lease by its ttl from the database's now and raises
// the recorded bound to bound, if the lease is still this holder's and
// its deadline has not passed; otherwise it returns an error wrapping
// sequence.ErrLeaseLost.
func (r *sqlLease) Renew(ctx context.Context, bound time.Time) error {
	var ns int64
	if !bound.IsZero() {
		ns = bound.UnixNano()
	}
	q := &r.l.s.q
	var n int64
	err := r.l.s.write(ctx, "renew a worker lease", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q.renewWorker, r.ttl.Microseconds(), ns, r.name, r.id, r.token)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		// MySQL counts the rows changed, not those found: a row found
		// and left as it was (the same deadline to the microsecond) is
		// still this holder's.
		return tx.QueryRowContext(ctx, q.holdsWorker, r.name, r.id, r.token).Scan(&n)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return r.lost("Renew")
	}
	return nil
}

// Release records bound, which may be lower than the bounds renewals
// recorded but is never taken below the bound the id had when leased (a
// zero bound, from a holder that issued nothing, keeps that one), and frees
// the id, if the lease is still this holder's and its deadline has not
// passed; otherwise it returns an error wrapping sequence.ErrLeaseLost.
func (r *sqlLease) Release(ctx context.Context, bound time.Time) error {
	ns := r.bound
	if !bound.IsZero() {
		ns = max(ns, bound.UnixNano())
	}
	var n int64
	err := r.l.s.write(ctx, "release a worker lease", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.l.s.q.releaseWorker, ns, r.name, r.id, r.token)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return r.lost("Release")
	}
	return nil
}

func (r *sqlLease) lost(op string) error {
	return fmt.Errorf("sqlseq: %s: worker %d of %q (table %s): the lease expired or is another holder's: %w",
		op, r.id, r.name, r.l.table(), sequence.ErrLeaseLost)
}

var _ snowflake.Leaser = (*Leaser)(nil)
