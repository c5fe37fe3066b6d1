package sqlseq_test

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// leaserAt is where a child of TestLeaserMultiProcess leases from.
type leaserAt struct {
	Driver  string
	Dialect sqlseq.Dialect
	DSN     string
}

func openLeaser(where string) (snowflake.Leaser, func(), error) {
	var at leaserAt
	if err := json.Unmarshal([]byte(where), &at); err != nil {
		return nil, nil, err
	}
	db, err := sql.Open(at.Driver, at.DSN)
	if err != nil {
		return nil, nil, err
	}
	s, err := sqlseq.New(db, at.Dialect, sqlseq.Options{})
	var l *sqlseq.Leaser
	if err == nil {
		l, err = sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return l, func() { db.Close() }, nil
}

// Processes killed with SIGKILL pass worker ids on through the database,
// and no id repeats (sequencetest.RunLeaserProcesses).
func TestLeaserMultiProcess(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.openDSN(t)
			newStore(t, b, db, sqlseq.Options{}) // migrated
			where, _ := json.Marshal(leaserAt{b.driver, b.dialect, dsn})
			sequencetest.RunLeaserProcesses(t, string(where), 200*time.Millisecond)
		})
	}
}
