package redisseq_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/redisseq"
)

var errRefusedEntry = errors.New("refused: another entry exists")

// A Redis whose catalog the previous release
// kept (entry X in the old hash). In ONE process (one Allocator), the
// first use of the records after the upgrade is several goroutines at
// once: one lists the catalog (which migrates), the others enroll Y with
// a check that refuses when any entry exists (as a colliding template
// would be refused against X). Y must never be recorded beside X.
// Control: the same with the catalog migrated first (sequential). Found
// by adversary run 3: the goroutines that did not migrate went on while
// the import ran, and 3 of 100 trials recorded Y beside X.
func TestMigrateEnrollRace(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	check := func(es []catalog.Entry) error {
		if len(es) > 0 {
			return errRefusedEntry
		}
		return nil
	}
	trial := func(i int, migrateFirst bool) (both bool) {
		prefix := fmt.Sprintf("t%d-%v:", i, migrateFirst)
		rdb.HSet(ctx, prefix+"{sn catalog}:entries",
			"0123456789abcdef", `{"ID":"0123456789abcdef","Name":"orders","Spec":"{}","First":"2025-11-24T16:00:00Z","By":"fixture"}`)
		rdb.Set(ctx, prefix+"{sn catalog}:version", "1", 0)
		a, err := redisseq.NewRedisOnlyAllocator(redis.NewClient(&redis.Options{Addr: srv.Addr()}), redisseq.AllocatorOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		c := catalog.Of(a)
		if migrateFirst {
			if _, err := c.Entries(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { c.Entries(ctx) })
		for g := range 4 {
			wg.Go(func() {
				time.Sleep(time.Duration(g) * 300 * time.Microsecond)
				c.Enroll(ctx, catalog.Entry{ID: fmt.Sprintf("y%d", g), Name: "colliding", Spec: "{}"}, check)
			})
		}
		wg.Wait()
		es, err := c.Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(es) > 1
	}
	bad, ctl := 0, 0
	const n = 100
	for i := range n {
		if trial(i, false) {
			bad++
		}
		if trial(i, true) {
			ctl++
		}
	}
	t.Logf("trials %d: catalog holds X and a colliding Y after a concurrent first use: %d; with the migration done first: %d", n, bad, ctl)
	if bad > 0 {
		t.Errorf("%d of %d trials recorded an entry the check would have refused against the migrated entry", bad, n)
	}
}
