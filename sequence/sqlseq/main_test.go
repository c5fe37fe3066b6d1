package sqlseq_test

import (
	"os"
	"testing"

	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(func() int { return mysqltest.Run(m.Run) }))
}
