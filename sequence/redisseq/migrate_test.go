package redisseq_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/redisseq"
)

// TestMigrateCatalog opens a Redis whose catalog the release before the
// records (commit 36dc60d) kept in a hash of its own: the first use of
// the records moves both entries into them, keeping when and by whom
// they were enrolled, and deletes the hash, so that a Forget afterwards
// is not undone by a new process.
func TestMigrateCatalog(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	rdb.HSet(ctx, "sn:{sn catalog}:entries",
		"0123456789abcdef", `{"ID":"0123456789abcdef","Name":"orders","Spec":"{\"fixture\":\"orders\"}","First":"2025-11-24T16:00:00Z","By":"fixture"}`,
		"fedcba9876543210", `{"ID":"fedcba9876543210","Name":"invoices","Spec":"{\"fixture\":\"invoices\"}","First":"2025-11-24T16:00:01Z","By":"fixture"}`)
	rdb.Set(ctx, "sn:{sn catalog}:version", "2", 0)
	rdb.Set(ctx, "sn:{sn obfuscate k}:record", "check-1", 0)
	rdb.HSet(ctx, "sn:{claim:series\x00order-1}", "digest", "digest-1", "token", "tok", "answer", `["SN-000042"]`, "until", time.Now().AddDate(50, 0, 0).UnixMicro(), "done", "1")
	open := func() *catalog.Catalog {
		a, err := redisseq.NewRedisOnlyAllocator(redis.NewClient(&redis.Options{Addr: srv.Addr()}), redisseq.AllocatorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return catalog.Of(a)
	}
	es, err := open().Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Name != "orders" || es[1].Name != "invoices" || es[0].First.Unix() != 1764000000 || es[1].By != "fixture" {
		t.Fatalf("after the migration the catalog holds %+v; want the release's two entries", es)
	}
	if n := rdb.Exists(ctx, "sn:{sn catalog}:entries", "sn:{sn catalog}:version").Val(); n != 0 {
		t.Fatalf("%d keys of the release's catalog are left", n)
	}
	a, _ := redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{})
	if v, err := sequence.Remember(ctx, a, "sn obfuscate k", "check-2"); v != "check-1" || err != nil {
		t.Fatalf("the release's record of a key's check value: %q, %v; want check-1", v, err)
	}
	if n := rdb.Exists(ctx, "sn:{sn obfuscate k}:record").Val(); n != 0 {
		t.Fatal("the release's record is left after it moved")
	}
	c, err := claim.Of(a).Claim(ctx, "series\x00order-1", "digest-1", "retry", time.Minute)
	if err != nil || c.Mine || c.Answer != `["SN-000042"]` {
		t.Fatalf("a retry of the key the release answered: %+v, %v; want its answer", c, err)
	}
	if n := rdb.Exists(ctx, "sn:{claim:series\x00order-1}").Val(); n != 0 {
		t.Fatal("the release's claim is left after it moved")
	}
	if ok, err := open().Forget(ctx, "0123456789abcdef"); !ok || err != nil {
		t.Fatalf("Forget: %v %v", ok, err)
	}
	if es, _ := open().Entries(ctx); len(es) != 1 || es[0].Name != "invoices" {
		t.Fatalf("after a Forget, in a new process: %+v; want the invoices alone", es)
	}
}
