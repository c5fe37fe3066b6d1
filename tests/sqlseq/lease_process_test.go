package sqlseq_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

func openLeaser(where string) (snowflake.Leaser, func(), error) {
	s, closeFn, err := openAt(where)
	if err != nil {
		return nil, nil, err
	}
	l, err := sqlseq.NewLeaser(s, sqlseq.LeaserOptions{})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return l, closeFn, nil
}

// Processes killed with SIGKILL pass worker ids on through the database,
// and no id repeats (sequencetest.RunLeaserProcesses).
func TestLeaserMultiProcess(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db, dsn := b.openDSN(t)
			newStore(t, b, db, sqlseq.Options{}) // migrated
			where, _ := json.Marshal(storeAt{b.driver, b.dialect, dsn})
			sequencetest.RunLeaserProcesses(t, string(where), 200*time.Millisecond)
		})
	}
}
