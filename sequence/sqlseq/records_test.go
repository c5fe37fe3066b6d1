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

// recordsAt is where a store of records is, for a child process.
type recordsAt struct {
	Driver  string
	Dialect sqlseq.Dialect
	DSN     string
}

// openRecords opens the records of the database where names.
func openRecords(where string) (record.Store, func(), error) {
	var at recordsAt
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
	return s.Records(), func() { db.Close() }, nil
}

func TestRecords(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			where, _ := json.Marshal(recordsAt{b.driver, b.dialect, b.dsn(t)})
			recordtest.Run(t, openRecords, string(where))
		})
	}
}
