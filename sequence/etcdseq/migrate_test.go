package etcdseq_test

import (
	"testing"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/etcdseq"
)

// TestLayoutRelease36dc60d reads a catalog as the release before the
// records (commit 36dc60d) wrote it into etcd: its layout is the
// records', so nothing moves, and the entries are there.
func TestLayoutRelease36dc60d(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Shared(t)
	s := newStore(t, c, etcdseq.Options{})
	cli := c.Client(t)
	p := s.Prefix()
	for k, v := range map[string]string{
		"cat/e/0123456789abcdef": `{"ID":"0123456789abcdef","Name":"orders","Spec":"{\"fixture\":\"orders\"}","First":"2025-11-24T16:00:00Z","By":"fixture"}`,
		"cat/e/fedcba9876543210": `{"ID":"fedcba9876543210","Name":"invoices","Spec":"{\"fixture\":\"invoices\"}","First":"2025-11-24T16:00:01Z","By":"fixture"}`,
		"cat/v":                  "fedcba9876543210",
	} {
		if _, err := cli.Put(ctx, p+k, v); err != nil {
			t.Fatal(err)
		}
	}
	es, err := catalog.Of(s).Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Name != "orders" || es[1].Name != "invoices" || es[0].First.Unix() != 1764000000 {
		t.Fatalf("the catalog holds %+v; want the release's two entries", es)
	}
	if _, err := catalog.Of(s).Enroll(ctx, catalog.Entry{ID: "aa", Name: "new"}, func(es []catalog.Entry) error {
		if len(es) != 2 {
			t.Errorf("an enrollment proven against %d entries, want the release's 2", len(es))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
