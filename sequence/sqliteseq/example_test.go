package sqliteseq_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqliteseq"
)

// A template's numbers from an SQLite file that other processes of the
// machine may share.
func Example() {
	dir, _ := os.MkdirTemp("", "sqliteseq")
	defer os.RemoveAll(dir)
	store, err := sqliteseq.Open(filepath.Join(dir, "app.db"), sqliteseq.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer seg.Close()
	orders := sn.MustNew("SN-@<seq, width=6>", sn.WithSequence("seq", seg))
	for range 2 {
		s, _ := orders.Next(context.Background())
		fmt.Println(s)
	}
	// Output:
	// SN-000001
	// SN-000002
}
