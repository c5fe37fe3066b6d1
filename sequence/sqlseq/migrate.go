package sqlseq

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Layouts of earlier releases, moved into the table of records (see
// records.go) the first time a Store uses its records, and at Migrate:
//
//   - the catalog's table, the ledger's name and "_catalog": its entries
//     are imported into the catalog's records, keeping when they were
//     first enrolled and by whom, and then deleted from it, so that a
//     Forget is not undone by a second import. The table, empty, is left
//     for the DBA to drop;
//   - the table of named records, the ledger's name and "_records": each
//     becomes the record "r/" and its name (see sequence.Remember), and is
//     deleted from it; the row that locked the old catalog is dropped;
//   - the journals, the ledger's name and "_journal" (a row per record)
//     and "_jhead" (a row per key: its head): each record becomes the
//     journal's record in the records (see package journal), unchanged, so
//     that anchors taken before still verify, a thousand a transaction,
//     each deleted once moved; then each head. A record whose key has no
//     head row (deleted by hand) stays where it is;
//   - the claims of idempotency keys, the ledger's name and "_idem", keyed
//     by the SHA-256 of the key: Migrate deletes those past their time,
//     and while any is left, a claim that finds no record of its key
//     moves the key's row into the records (see claim.Records), and
//     deletes it;
//   - the worker-id leases, the ledger's name and "_workers" (a row per
//     name and id): each becomes the id's record of
//     snowflake.RecordLeaser, adopted with its deadline and its bound, in
//     one transaction with moving the table away (PostgreSQL: locked,
//     renamed "_wmoved", and a table that takes no row made in its place)
//     or after it (MySQL: the table renamed "_wmoving" and a table that
//     takes no row renamed into its place in one RENAME TABLE, its rows
//     adopted, then renamed "_wmoved"). A process of the earlier release
//     still running finds no row to renew, loses its lease and stops
//     issuing; its id stays held until the deadline it had, and is then
//     issued above its bound. The layouts of the names go with them
//     (snowflake.MoveLayouts). The record "m/workers" says it is done; a
//     new ledger gets the table that takes no row at once, for a process
//     of an earlier release started on it.
//
// Every process of a ledger must run this release or a later one: a
// process of an earlier one would enroll in the old table.

// migrate moves what earlier releases kept in their own tables into the
// table of records.
func (s *Store) migrate(ctx context.Context) error {
	none, err := records{s: s, raw: true}.Get(ctx, legacyNone)
	if err != nil {
		return err
	}
	if none[0].Exists() {
		// Made by Schema where no earlier release's table was: nothing
		// to look for, which a role that may not read them could not.
		return s.migrateWorkers(ctx)
	}
	if err := s.migrateRecords(ctx); err != nil {
		return err
	}
	if err := s.migrateJournals(ctx); err != nil {
		return err
	}
	if err := s.sweepClaims(ctx); err != nil {
		return err
	}
	if err := s.migrateWorkers(ctx); err != nil {
		return err
	}
	var es []catalog.Entry
	err = s.retry(ctx, "read the catalog of an earlier release", func() error {
		es = es[:0]
		rows, err := s.db.QueryContext(ctx, s.q.legacyEntries)
		if noTable(err) {
			return nil // a ledger made after the records, or migrated
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e catalog.Entry
			var us int64
			if err := rows.Scan(&e.ID, &e.Name, &e.Spec, &us, &e.By); err != nil {
				return err
			}
			e.First = time.UnixMicro(us).UTC()
			es = append(es, e)
		}
		return rows.Err()
	})
	if err != nil || len(es) == 0 {
		return err
	}
	if err := catalog.New(records{s: s, raw: true}, nil).Import(ctx, es); err != nil {
		return err
	}
	return s.retry(ctx, "empty the catalog of an earlier release", func() error {
		for _, e := range es {
			if _, err := s.db.ExecContext(ctx, s.q.legacyForget, e.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// migrateRecords moves the named records of an earlier release.
func (s *Store) migrateRecords(ctx context.Context) error {
	old := map[string][]byte{}
	err := s.retry(ctx, "read the records of an earlier release", func() error {
		clear(old)
		rows, err := s.db.QueryContext(ctx, s.q.legacyRecords)
		if noTable(err) {
			return nil
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, value []byte
			if err := rows.Scan(&name, &value); err != nil {
				return err
			}
			old[string(name)] = value
		}
		return rows.Err()
	})
	if err != nil || len(old) == 0 {
		return err
	}
	err = record.Update(ctx, records{s: s, raw: true}, func(tx *record.Tx) error {
		for name, value := range old {
			if name == "sn catalog lock" {
				continue // the old catalog's lock: nothing to keep
			}
			r, err := tx.Get1("r/" + name)
			if err != nil {
				return err
			}
			if !r.Exists() {
				tx.Put("r/"+name, value)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.retry(ctx, "empty the records of an earlier release", func() error {
		for name := range old {
			if _, err := s.db.ExecContext(ctx, s.q.legacyUnrecord, []byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
}

// migrateJournals moves the journals of an earlier release, a thousand
// records a transaction, and then their heads. Each transaction locks the
// rows it moves: a process migrating beside it waits, and then finds
// them gone, rather than writing again records moved, and maybe pruned,
// since it read them.
func (s *Store) migrateJournals(ctx context.Context) error {
	none := false
	err := s.retry(ctx, "read the journal heads of an earlier release", func() error {
		rows, err := s.db.QueryContext(ctx, s.q.legacyHeads+` LIMIT 1`)
		if none = noTable(err); none || err != nil {
			return nil
		}
		defer rows.Close()
		none = !rows.Next()
		return rows.Err()
	})
	if err != nil || none {
		return err
	}
	for {
		n := 0
		err := s.write(ctx, "move the journals of an earlier release", func(tx *sql.Tx) error {
			n = 0
			rows, err := tx.QueryContext(ctx, s.q.legacyEvents)
			if err != nil {
				return err
			}
			var ops []record.Op
			through := map[string]int64{}
			for rows.Next() {
				var k, id, h []byte
				var e journal.Event
				var kind string
				var at, deadline int64
				if err := rows.Scan(&k, &id, &e.Seq, &kind, &e.Range.First, &e.Range.Last, &at, &e.By, &e.Actor, &e.Reason, &deadline, &h); err != nil {
					rows.Close()
					return err
				}
				// The kind as written, even one this release does not
				// know: VerifyChain reports what does not hash.
				e.Kind, _ = journal.ParseEventKind(kind)
				e.At, e.Deadline = journal.FromMicros(at), journal.FromMicros(deadline)
				copy(e.Hash[:], h)
				ops = append(ops, record.Put(journal.Key(string(k), e.Seq), journal.MarshalEvent(e)))
				through[string(id)] = max(through[string(id)], e.Seq)
				n++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if err := s.putAbsent(ctx, tx, ops); err != nil {
				return err
			}
			for id, seq := range through {
				if _, err := tx.ExecContext(ctx, s.q.legacyUnjournal, []byte(id), seq); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	return s.write(ctx, "move the journal heads of an earlier release", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, s.q.legacyHeads+` FOR UPDATE`)
		if err != nil {
			return err
		}
		var ops []record.Op
		var ids [][]byte
		for rows.Next() {
			var k, id, hb []byte
			var h journal.Head
			if err := rows.Scan(&k, &id, &h.Seq, &hb, &h.Mark); err != nil {
				rows.Close()
				return err
			}
			copy(h.Hash[:], hb)
			ops = append(ops, record.Put(journal.HeadKey(string(k)), journal.EncodeHead(h)))
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := s.putAbsent(ctx, tx, ops); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, s.q.legacyUnhead, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// workersMoved is the record that says the worker-id leases are in the
// records.
const workersMoved = "m/workers"

// legacyNone is the record that says the ledger never had the tables of
// an earlier release (but "_workers", which workersMoved covers):
// Store.Schema writes it where it finds none.
const legacyNone = "m/legacy"

// migrateWorkers moves the worker-id leases of an earlier release into
// the records, and fences their table; two processes doing it at once
// adopt each lease once or twice, which is the same (Adopt).
func (s *Store) migrateWorkers(ctx context.Context) error {
	raw := records{s: s, raw: true}
	for try := 0; ; try++ {
		rs, err := raw.Get(ctx, workersMoved)
		if err != nil || rs[0].Exists() {
			return err
		}
		if err := snowflake.MoveLayouts(ctx, raw); err != nil {
			return err
		}
		err = s.retry(ctx, "look for the worker leases of an earlier release", func() error {
			_, err := s.db.ExecContext(ctx, s.q.legacyWorkersExist)
			return err
		})
		switch {
		case noTable(err) && s.dialect == Postgres:
			err = s.migrateTx(ctx, "fence the worker leases of an earlier release", func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, s.q.fenceWorkers); err != nil {
					return err
				}
				return raw.putIn(ctx, tx, workersMoved)
			})
		case noTable(err):
			err = s.fenceMySQL(ctx, true)
		case err != nil:
		case s.dialect == Postgres:
			err = s.migrateTx(ctx, "move the worker leases of an earlier release", func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `LOCK TABLE `+s.q.legacyWorkersTable+` IN ACCESS EXCLUSIVE MODE`); err != nil {
					return err
				}
				done, err := (&txRecords{s: s, tx: tx}).Get(ctx, workersMoved)
				if err != nil || done[0].Exists() {
					return err // moved by a process beside this one
				}
				// The table is the fence already, and the record that
				// says so was deleted (by hand, a restore): say it again.
				var fenced bool
				if err := tx.QueryRowContext(ctx, s.q.fencedWorkers, s.q.legacyWorkersTable).Scan(&fenced); err != nil {
					return err
				}
				if fenced {
					return records{s: s, raw: true}.putIn(ctx, tx, workersMoved)
				}
				if err := s.adoptWorkers(ctx, tx); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, s.q.moveWorkers); err != nil {
					return err
				}
				_, err = tx.ExecContext(ctx, s.q.fenceWorkers)
				return err
			})
		default:
			err = s.fenceMySQL(ctx, false)
		}
		// A migration beside this one made or moved a table first (on
		// PostgreSQL, a duplicate table, type or catalog row): look again.
		if st, n := sqlState(err), mysqlNumber(err); try < 5 && (st == "42P07" || st == "23505" || st == "42710" || n == "1050" || n == "1146") {
			continue
		}
		if err != nil {
			return err
		}
	}
}

// migrateTx runs fn in a transaction of the migration, tried again on a
// transient error. Unlike a write of numbers (Store.write), its commit is
// not checked for replication: a migration that a failover loses is
// lost whole, with what it moved and the fence (on MySQL, a fence kept
// and the adoption lost is resumed by the next Migrate), and Migrate
// itself succeeds on a server whose replication a Store then refuses,
// at its first number.
func (s *Store) migrateTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	return s.retry(ctx, what, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// fenceMySQL puts the table that takes no row in the place of the
// worker leases' table, adopting the leases that table held unless
// fresh, in statements that resume where a process that died doing it
// stopped.
func (s *Store) fenceMySQL(ctx context.Context, fresh bool) error {
	return s.retry(ctx, "move the worker leases of an earlier release", func() error {
		if _, err := s.db.ExecContext(ctx, strings.Replace(s.q.fenceWorkers, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)); err != nil {
			return err
		}
		if fresh {
			if _, err := s.db.ExecContext(ctx, s.q.placeFence); err != nil {
				return err
			}
			return s.migrateTx(ctx, "fence the worker leases", func(tx *sql.Tx) error {
				return records{s: s, raw: true}.putIn(ctx, tx, workersMoved)
			})
		}
		// 1050: moved already, by this process before it died or by one
		// beside it; 1146: the fence was placed by one beside it.
		if _, err := s.db.ExecContext(ctx, s.q.moveWorkers); err != nil && mysqlNumber(err) != "1050" && mysqlNumber(err) != "1146" {
			return err
		}
		// A process adopting beside this one wrote a lease first: read
		// again, and adopt on top of it.
		err := errNotApplied
		for try := 0; try < 10 && errors.Is(err, errNotApplied); try++ {
			err = s.migrateTx(ctx, "adopt the worker leases of an earlier release", func(tx *sql.Tx) error {
				return s.adoptWorkers(ctx, tx)
			})
		}
		if err != nil {
			return err
		}
		// 1146: renamed by a process beside this one; 1050: an earlier
		// migration's moved table is there (the record that said it was
		// done deleted by hand), and this one's stays as it is.
		if _, err := s.db.ExecContext(ctx, s.q.movedWorkers); err != nil && mysqlNumber(err) != "1146" && mysqlNumber(err) != "1050" {
			return err
		}
		return nil
	})
}

// adoptWorkers reads the leases of the moved table and adopts each in
// the records, with the record that says they are moved, in tx.
func (s *Store) adoptWorkers(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		name          []byte
		id, us, bound int64
		token         string
	}
	var old []row
	rows, err := tx.QueryContext(ctx, s.q.legacyWorkers)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.name, &r.id, &r.token, &r.us, &r.bound); err != nil {
			rows.Close()
			return err
		}
		old = append(old, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	view := &txRecords{s: s, tx: tx}
	cond, ops, err := record.In(ctx, view, func(rtx *record.Tx) error {
		for _, r := range old {
			l, err := snowflake.NewRecordLeaser(view, string(r.name))
			if err != nil {
				return err
			}
			var bound time.Time
			if r.bound > 0 {
				bound = time.Unix(0, r.bound)
			}
			if err := l.Adopt(rtx, r.id, time.UnixMicro(r.us), bound); err != nil {
				return err
			}
		}
		rtx.Put(workersMoved, []byte("moved "+time.Now().UTC().Format(time.RFC3339)))
		return nil
	})
	if err != nil {
		return err
	}
	ok, err := records{s: s, raw: true}.apply(ctx, tx, cond, ops)
	if err == nil && !ok {
		err = errNotApplied
	}
	return err
}

// putIn writes the record k, saying when, in tx.
func (r records) putIn(ctx context.Context, tx *sql.Tx, k string) error {
	ok, err := r.apply(ctx, tx, nil, []record.Op{record.Put(k, []byte("moved "+time.Now().UTC().Format(time.RFC3339)))})
	if err == nil && !ok {
		err = errNotApplied
	}
	return err
}

// putAbsent writes the puts of ops whose keys hold no value, in tx.
func (s *Store) putAbsent(ctx context.Context, tx *sql.Tx, ops []record.Op) error {
	for _, o := range ops {
		if _, err := tx.ExecContext(ctx, s.insertIgnore(s.kvTable())+` (k, v, ver) VALUES (`+s.args(0, 3)+`)`+s.onConflictNothing(),
			[]byte(o.Key), o.Value, rand.Int64N(1<<63-1)+1); err != nil {
			return err
		}
	}
	return nil
}

// sweepClaims deletes the claims of an earlier release past their time,
// and notes whether any is left.
func (s *Store) sweepClaims(ctx context.Context) error {
	var left int64
	err := s.retry(ctx, "sweep the claims of an earlier release", func() error {
		now, err := s.now(ctx)
		if err != nil {
			return err
		}
		_, err = s.db.ExecContext(ctx, s.q.legacySweep, now.UnixMicro())
		if noTable(err) {
			left = 0
			return nil
		}
		if err != nil {
			return err
		}
		return s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+s.table+`_idem`).Scan(&left)
	})
	s.legacyClaims.Store(left > 0)
	return err
}

// migrateClaim moves the claim of record key k ("i/" and its id) that an
// earlier release kept, if there is one.
func (s *Store) migrateClaim(ctx context.Context, k string) (bool, error) {
	id, ok := strings.CutPrefix(k, "i/")
	if !ok || !s.legacyClaims.Load() {
		return false, nil
	}
	h := sha256.Sum256([]byte(id))
	var m claim.Memo
	var done int
	err := s.retry(ctx, "read a claim of an earlier release", func() error {
		return s.db.QueryRowContext(ctx, s.q.legacyMemo, h[:]).Scan(&m.Digest, &m.Token, &m.Answer, &m.Until, &done)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m.Done = done != 0
	if _, err := (records{s: s, raw: true}).Commit(ctx, []record.Record{{Key: k}}, claim.Ops(id, m)); err != nil {
		return false, err
	}
	return true, s.retry(ctx, "delete a claim of an earlier release", func() error {
		_, err := s.db.ExecContext(ctx, s.q.legacyUnmemo, h[:])
		return err
	})
}

// noTable reports whether err says a table does not exist.
func noTable(err error) bool {
	return sqlState(err) == "42P01" || mysqlNumber(err) == "1146"
}

// kvReady makes the table of records, and moves what earlier releases
// kept elsewhere into it, once per Store: a call while another runs the
// migration waits for it (Migrate), so that nothing is proven against
// records the migration has not filled yet.
func (s *Store) kvReady(ctx context.Context) error {
	if s.kvOK.Load() {
		return nil
	}
	return s.Migrate(ctx)
}

var _ record.Holder = (*Store)(nil)
