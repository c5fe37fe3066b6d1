package sqlseq_test

import (
	"os"
	"testing"

	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/testserver"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/sequencetest"
)

// TestMain runs a child of TestLeaserMultiProcess, or of the record
// suite, when the environment says so (see lease_multiprocess_test.go), and the tests otherwise.
func TestMain(m *testing.M) {
	recordtest.Main(openRecords)
	sequencetest.LeaserMain(openLeaser)
	if spec := os.Getenv(journalEnv); spec != "" {
		os.Exit(runJournalChild(spec))
	}
	os.Exit(testserver.Chain(m.Run, pgtest.Run, mysqltest.Run))
}
