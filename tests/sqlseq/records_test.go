package sqlseq_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/sqlseq"
)

// storeAt is where a Store is, for a child process (of the record suite
// or of the leases' processes).
type storeAt struct {
	Driver  string
	Dialect sqlseq.Dialect
	DSN     string
}

// openAt opens the Store that where (a storeAt in JSON) names, migrated,
// over a *sql.DB of its own, and returns what closes it.
func openAt(where string) (*sqlseq.Store, func(), error) {
	var at storeAt
	if err := json.Unmarshal([]byte(where), &at); err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(at.Driver, at.DSN)
	if err != nil {
		return nil, nil, err
	}
	s, err := sqlseq.New(db, at.Dialect, sqlseq.Options{})
	if err == nil {
		err = s.Migrate(context.Background())
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return s, func() { db.Close() }, nil
}

func openRecords(where string) (record.Store, func(), error) {
	s, closeFn, err := openAt(where)
	if err != nil {
		return nil, nil, err
	}
	return s.Records(), closeFn, nil
}

func TestRecords(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			where, _ := json.Marshal(storeAt{b.driver, b.dialect, b.dsn(t)})
			recordtest.Run(t, openRecords, string(where))
		})
	}
}

// A commit refused on one condition leaves nothing behind, not even the
// row of version 0 that locked a key it wanted absent.
func TestRecordsRefusedLeavesNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := b.open(t)
			rs := newStore(t, b, db, sqlseq.Options{}).Records()
			if ok, err := rs.Commit(ctx, nil, []record.Op{record.Put("y", []byte("1"))}); !ok || err != nil {
				t.Fatal(ok, err)
			}
			ok, err := rs.Commit(ctx, []record.Record{{Key: "x"}, {Key: "y", Version: 42}}, []record.Op{record.Put("x", []byte("2"))})
			if ok || err != nil {
				t.Fatalf("a commit on a stale version of y: %v, %v; want refused", ok, err)
			}
			var zero int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sn_ledger_kv WHERE ver = 0`).Scan(&zero); err != nil || zero != 0 {
				t.Fatalf("%d rows of version 0 left by a refused commit (%v)", zero, err)
			}
		})
	}
}
