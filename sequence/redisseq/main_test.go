package redisseq_test

import (
	"os"
	"testing"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/internal/testserver"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/sequencetest"
)

// TestMain runs a child of the multi-process tests when the environment
// says so (see multiprocess_test.go), and the tests otherwise, stopping the
// shared Redis Cluster at the end.
func TestMain(m *testing.M) {
	recordtest.Main(openRecords)
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	if spec := os.Getenv(ledgerEnv); spec != "" {
		os.Exit(runLedgerChild(spec))
	}
	sequencetest.LeaserMain(openLeaser)
	os.Exit(testserver.Chain(m.Run, pgtest.Run, redistest.Run))
}
