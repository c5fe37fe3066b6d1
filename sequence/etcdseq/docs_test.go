package etcdseq_test

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
)

// The etcd fragment of docs/stores.md, run on a three-member cluster:
// TestDocs, in cmd/sn, finds it here line for line.
func TestDocStores(t *testing.T) {
	ctx := t.Context()
	endpoints := etcdtest.Shared(t).Endpoints()

	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints}) // the members' client URLs
	ledger, err := etcdseq.New(cli, etcdseq.Options{})              // keys under sn/; a range is one transaction
	seg, err := sequence.NewSegment(ledger, sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	defer seg.Close()
	if _, err := seg.Next(ctx, t.Name()); err != nil {
		t.Fatalf("the first number of the ledger's Segment: %v", err)
	}
}
