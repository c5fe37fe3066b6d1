package redisseq_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// Redis in front of a ledger whose PostgreSQL replicates asynchronously:
// the ledger refuses the range Redis asks it for, through the Allocator
// and through the strict Counter alike, so that no number comes from a
// range a failover could lose. The control, the ledger with the risk
// accepted, issues.
func TestLedgerReplicationRefused(t *testing.T) {
	ctx := t.Context()
	primary := pgtest.StartPrimary(t)
	standby := pgtest.StartStandby(t, primary)
	db, err := sql.Open("pgx", pgtest.MultiHostDSN("postgres", primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Replication: sqlseq.SingleServer})).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		o       sqlseq.Options
		refused bool
	}{{"checked", sqlseq.Options{}, true}, {"control", sqlseq.Options{Replication: sqlseq.AcceptAsyncLoss}, false}} {
		t.Run(c.name, func(t *testing.T) {
			ledger := must(sqlseq.New(db, sqlseq.Postgres, c.o))
			rdb := redistest.Start(t, redistest.Persistent()).Client(t)
			seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{})), sequence.SegmentOptions{}))
			defer seg.Close()
			strict := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{}))
			for name, g := range map[string]sequence.Gen{"Allocator": seg, "Counter": strict} {
				n, err := g.Next(ctx, "orders-"+name)
				if c.refused && !errors.Is(err, sqlseq.ErrAsyncReplication) {
					t.Errorf("Redis's %s in front of the ledger: %d, %v; want ErrAsyncReplication", name, n, err)
				}
				if !c.refused && (err != nil || n != 1) {
					t.Errorf("Redis's %s in front of the ledger, risk accepted: %d, %v", name, n, err)
				}
			}
		})
	}
}
