package boltseq_test

import (
	"path/filepath"
	"testing"

	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
)

// TestRecords runs the record suite on a file. Only one process holds a
// file, so the suite's processes do not apply: the lock is tested by
// TestLocked.
func TestRecords(t *testing.T) {
	s, err := boltseq.Open(filepath.Join(t.TempDir(), "r.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recordtest.Run(t, func(string) (record.Store, func(), error) { return s.Records(), func() {}, nil }, "")
}
