package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// pair starts a primary with a streaming standby, made synchronous when
// sync is set, and returns them with a ledger Store over a DSN that names
// both (target_session_attrs=read-write), as an application that follows
// a failover has.
func pair(t *testing.T, sync bool, o sqlseq.Options) (primary, standby *pgtest.Server, store *sqlseq.Store) {
	t.Helper()
	primary = pgtest.Start(t)
	standby = pgtest.StartStandby(t, primary)
	if sync {
		db := primary.DB(t, primary.DSN())
		for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`).Scan(&n); err == nil && n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the standby never became synchronous")
			}
		}
	}
	db, err := sql.Open("pgx", pgtest.MultiHostDSN("postgres", primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store = must(sqlseq.New(db, sqlseq.Postgres, o))
	if err := store.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return primary, standby, store
}

// CheckReplication refuses a primary with an asynchronous standby, or with
// a slot of a standby that is not connected, unless told the server never
// fails over or the risk is accepted; it accepts a lone server and a
// synchronous standby, and refuses a standby as the ledger.
func TestCheckReplication(t *testing.T) {
	ctx := t.Context()
	lone := newStore(t, postgresBackend(), postgresBackend().open(t), sqlseq.Options{})
	if err := lone.CheckReplication(ctx); err != nil {
		t.Errorf("a server without standbys: %v", err)
	}
	primary, standby, store := pair(t, false, sqlseq.Options{})
	err := store.CheckReplication(ctx)
	if !errors.Is(err, sqlseq.ErrAsyncReplication) || !strings.Contains(err.Error(), "1 of 1 standbys are not synchronous") || !strings.Contains(err.Error(), "synchronous_standby_names is empty") {
		t.Errorf("a primary with an asynchronous standby: %v", err)
	}
	for _, r := range []sqlseq.Replication{sqlseq.SingleServer, sqlseq.AcceptAsyncLoss} {
		db := primary.DB(t, primary.DSN())
		if err := must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Replication: r})).CheckReplication(ctx); err != nil {
			t.Errorf("Replication %q: %v", r, err)
		}
	}
	if _, err := sqlseq.New(primary.DB(t, primary.DSN()), sqlseq.Postgres, sqlseq.Options{Replication: "sometimes"}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Replication \"sometimes\": %v", err)
	}
	onStandby := must(sqlseq.New(standby.DB(t, standby.DSN()), sqlseq.Postgres, sqlseq.Options{Replication: sqlseq.SingleServer}))
	if err := onStandby.CheckReplication(ctx); err == nil || !strings.Contains(err.Error(), "is a standby") {
		t.Errorf("a standby as the ledger: %v", err)
	}
	_, _, syncStore := pair(t, true, sqlseq.Options{})
	if err := syncStore.CheckReplication(ctx); err != nil {
		t.Errorf("a primary with a synchronous standby: %v", err)
	}
}

// failover issues ranges from several goroutines, cuts the standby off,
// issues more, kills the primary and promotes the standby, and issues
// again through the same DSN. It returns every range reserved and how many
// calls failed while the standby was cut off.
func failover(t *testing.T, primary, standby *pgtest.Server, store *sqlseq.Store) (ranges []sequence.Range, failed int) {
	t.Helper()
	var mu sync.Mutex
	run := func(rounds int, timeout time.Duration) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), timeout)
					r, err := store.Allocate(ctx, "orders", 100)
					cancel()
					mu.Lock()
					if err != nil {
						failed++
					} else {
						ranges = append(ranges, r)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	run(20, 10*time.Second)
	standby.Disconnect(t)
	before := failed
	run(5, time.Second) // acknowledged only if the primary does not wait for the standby
	failed -= before
	primary.Kill(t)
	standby.Promote(t)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := store.Allocate(t.Context(), "probe", 1); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no Allocate on the promoted standby: %v", err)
		}
	}
	n := len(ranges)
	run(20, 10*time.Second)
	if len(ranges) != n+80 {
		t.Fatalf("after the failover %d of 80 Allocates worked", len(ranges)-n)
	}
	return ranges, failed
}

// overlaps counts the pairs of ranges that share a number.
func overlaps(rs []sequence.Range) int {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b sequence.Range) int { return int(a.First - b.First) })
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i].First <= s[i-1].Last {
			n++
		}
	}
	return n
}

// The hazard: with asynchronous replication, the primary acknowledges
// ranges the standby never receives, and after a failover the promoted
// standby hands them out again. (This is the control: the test sees the
// repeats.)
func TestFailoverAsyncRepeats(t *testing.T) {
	primary, standby, store := pair(t, false, sqlseq.Options{Replication: sqlseq.AcceptAsyncLoss})
	ranges, failed := failover(t, primary, standby, store)
	n := overlaps(ranges)
	t.Logf("asynchronous: %d ranges, %d failed while the standby was cut off, %d overlapping after the failover", len(ranges), failed, n)
	if n == 0 {
		t.Fatal("no range was handed out twice: the test cannot see the hazard")
	}
}

// With a synchronous standby, the primary acknowledges no range the
// standby does not have (cut off, it makes Allocate wait, and the call
// fails), and the failover repeats nothing.
func TestFailoverSyncNoRepeat(t *testing.T) {
	primary, standby, store := pair(t, true, sqlseq.Options{})
	if err := store.CheckReplication(t.Context()); err != nil {
		t.Fatal(err)
	}
	ranges, failed := failover(t, primary, standby, store)
	n := overlaps(ranges)
	t.Logf("synchronous: %d ranges, %d failed while the standby was cut off, %d overlapping after the failover", len(ranges), failed, n)
	if n != 0 {
		t.Errorf("%d ranges handed out twice", n)
	}
	if failed == 0 {
		t.Error("no Allocate failed while the synchronous standby was cut off: the primary did not wait for it")
	}
}
