package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/sqlseq"
)

// pair starts a primary with a streaming standby, made synchronous when
// sync is set, and returns them with a ledger Store over a DSN that names
// both (target_session_attrs=read-write), as an application that follows
// a failover has.
func pair(t *testing.T, sync bool, o sqlseq.Options) (primary, standby *pgtest.Server, store *sqlseq.Store) {
	t.Helper()
	primary = pgtest.StartPrimary(t)
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
// calls failed while the standby was cut off, and their errors. After the
// failover it issues through then, or store when then is nil.
func failover(t *testing.T, primary, standby *pgtest.Server, store *sqlseq.Store, then ...*sqlseq.Store) ([]sequence.Range, int, []error) {
	t.Helper()
	var d draws
	run := func(rounds int, timeout time.Duration) { d.run(store, rounds, timeout) }
	run(20, 10*time.Second)
	standby.Disconnect(t)
	before := d.failed
	run(5, time.Second) // acknowledged only if the primary does not wait for the standby
	failed := d.failed - before
	cut := slices.Clone(d.errs[before:])
	if len(then) > 0 {
		store = then[0]
	}
	promote(t, &d, primary, standby, store)
	return d.ranges, failed, cut
}

// promote kills the primary, promotes the standby, and has d reserve 80
// more ranges from it through store.
func promote(t *testing.T, d *draws, primary, standby *pgtest.Server, store *sqlseq.Store) {
	t.Helper()
	primary.Kill(t)
	standby.Promote(t)
	// The promoted standby has no standby of its own: it waits for none
	// (a base backup taken after the primary named its synchronous
	// standbys has them in its postgresql.auto.conf).
	for _, q := range []string{`ALTER SYSTEM RESET synchronous_standby_names`, `SELECT pg_reload_conf()`} {
		if _, err := standby.DB(t, standby.DSN()).Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err := store.Allocate(ctx, "probe", 1)
		cancel()
		if err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no Allocate on the promoted standby: %v", err)
		}
	}
	n := len(d.ranges)
	d.run(store, 20, 10*time.Second)
	if len(d.ranges) != n+80 {
		t.Fatalf("after the failover %d of 80 Allocates worked", len(d.ranges)-n)
	}
}

// draws collects the ranges that 4 goroutines reserve, and counts the
// calls that failed.
type draws struct {
	mu     sync.Mutex
	ranges []sequence.Range
	failed int
	errs   []error // of the calls that failed, in order
}

// run has 4 goroutines each reserve rounds ranges of 100 numbers of
// "orders" from store, each call within timeout.
func (d *draws) run(store *sqlseq.Store, rounds int, timeout time.Duration) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				r, err := store.Allocate(ctx, "orders", 100)
				cancel()
				d.mu.Lock()
				if err != nil {
					d.failed++
					d.errs = append(d.errs, err)
				} else {
					d.ranges = append(d.ranges, r)
				}
				d.mu.Unlock()
			}
		})
	}
	wg.Wait()
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
	ranges, failed, _ := failover(t, primary, standby, store)
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
	ranges, failed, cut := failover(t, primary, standby, store, single(t, primary, standby))
	n := overlaps(ranges)
	t.Logf("synchronous: %d ranges, %d failed while the standby was cut off, %d overlapping after the failover", len(ranges), failed, n)
	// Each refusal says why: the first ones, whose commit waited for the
	// standby until their deadline, too (adversary run 9, F4).
	for _, err := range cut {
		if !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "standby") {
			t.Errorf("while the standby was cut off: %v; want an ErrUnavailable that names the standby", err)
		}
	}
	if n != 0 {
		t.Errorf("%d ranges handed out twice", n)
	}
	if failed == 0 {
		t.Error("no Allocate failed while the synchronous standby was cut off: the primary did not wait for it")
	}
}

// A synchronous standby that stops answering still shows as connected
// until wal_sender_timeout, so the check before the commit passes and the
// commit waits for it until the caller's deadline. That refusal says why
// (ErrUnavailable, naming the standby), not a bare "context deadline
// exceeded" (adversary run 9, F4); once the standby answers again the
// ledger goes on above what the refused call may have committed.
func TestSyncStandbyStalled(t *testing.T) {
	_, standby, store := pair(t, true, sqlseq.Options{})
	ctx := t.Context()
	first, err := store.Allocate(ctx, "orders", 10)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := standby.DB(t, standby.DSN()).QueryRow(`SELECT pid FROM pg_stat_wal_receiver`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()
	// One Allocate's commit waits for the standby and holds the key's
	// row; three more wait for the row. Each refusal says why (adversary
	// run 10, F3).
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			if i > 0 {
				time.Sleep(200 * time.Millisecond) // after the first holds the row
			}
			stalled, cancel := context.WithTimeout(ctx, time.Duration(2-min(i, 1))*time.Second)
			defer cancel()
			_, errs[i] = store.Allocate(stalled, "orders", 10)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "synchronous standby") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Allocate %d while the standby is stopped: %v; want an ErrUnavailable that says it waited for a synchronous standby", i, err)
		}
	}
	if err := errs[0]; !strings.Contains(fmt.Sprint(err), "the commit waited for a synchronous standby") {
		t.Errorf("the Allocate whose commit waited: %v", err)
	}
	// Through a Segment, the caller whose deadline ends first learns that
	// the store has not answered, and for how long (run 10, F2).
	seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10}))
	defer seg.Close()
	short, cancel := context.WithTimeout(ctx, time.Second)
	_, err = seg.Next(short, "segment")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(fmt.Sprint(err), "no block from the store yet") {
		t.Errorf("Segment.Next while the standby is stopped: %v; want it to say it waited for the store", err)
	}
	resume()
	r, err := store.Allocate(ctx, "orders", 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.First <= first.Last+10 {
		t.Errorf("after the standby answers again: %v; want it above %d, what the refused calls may have committed", r, first.Last+10)
	}
}

// single opens a Store over the DSN naming both servers that declares
// the server alone: after a failover the promoted standby has no standby
// of its own, which only a declaration can tell.
func single(t *testing.T, primary, standby *pgtest.Server) *sqlseq.Store {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.MultiHostDSN("postgres", primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Replication: sqlseq.SingleServer}))
}

// setSync sets the primary's synchronous_standby_names and reloads it,
// and waits until pg_stat_replication shows want synchronous standbys.
func setSync(t *testing.T, primary *pgtest.Server, names string, want int) {
	t.Helper()
	db := primary.DB(t, primary.DSN())
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = '` + names + `'`, `SELECT pg_reload_conf()`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`).Scan(&n); err == nil && n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the primary never had %d synchronous standbys", want)
		}
	}
}

// The library path, as docs/stores.md writes it (New, Migrate,
// NewSegment, default options), on a primary with an asynchronous
// standby: the Segment's first number is refused by the ledger itself, not
// only by the backends that call CheckReplication. So are a gapless draw,
// a worker-id lease, an enrollment and an idempotency claim, each a write
// that a failover could lose.
func TestLibraryPathRefusesAsync(t *testing.T) {
	ctx := t.Context()
	primary, standby, store := pair(t, false, sqlseq.Options{})
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	if n, err := seg.Next(ctx, "orders"); !errors.Is(err, sqlseq.ErrAsyncReplication) {
		t.Errorf("Segment.Next over a primary with an asynchronous standby: %d, %v", n, err)
	}
	db := primary.DB(t, pgtest.MultiHostDSN("postgres", primary, standby))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.Gapless().Next(sqlseq.WithTx(ctx, tx), "invoices"); !errors.Is(err, sqlseq.ErrAsyncReplication) {
		t.Errorf("a gapless draw: %d, %v", n, err)
	}
	tx.Rollback()
	if _, err := must(sqlseq.NewLeaser(store, sqlseq.LeaserOptions{})).Lease(ctx, tiny, time.Minute); !errors.Is(err, sqlseq.ErrAsyncReplication) {
		t.Errorf("a worker-id lease: %v", err)
	}
	if _, err := catalog.Of(store).Enroll(ctx, catalog.Entry{ID: "x", Name: "x", Spec: "x", By: "t"}, func([]catalog.Entry) error { return nil }); !errors.Is(err, sqlseq.ErrAsyncReplication) {
		t.Errorf("an enrollment: %v", err)
	}
	if _, err := claim.Of(store).Claim(ctx, "key", "digest", "token", time.Minute); !errors.Is(err, sqlseq.ErrAsyncReplication) {
		t.Errorf("an idempotency claim: %v", err)
	}
	// The refusal says what to change.
	_, err = seg.Next(ctx, "orders")
	for _, want := range []string{"1 of 1 standbys are not synchronous", "synchronous_standby_names", `"single-server"`, `"accept-async-failover-loss"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	// The control: declared, the same Segment issues.
	acc := must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Replication: sqlseq.AcceptAsyncLoss}))
	if n, err := must(sequence.NewSegment(acc, sequence.SegmentOptions{})).Next(ctx, "orders"); err != nil || n != 1 {
		t.Errorf("with the risk accepted: %d, %v", n, err)
	}
}

// A server that could have standbys and shows none connected cannot be
// told from one whose standby is away: it is refused unless declared
// alone, and a server provably alone (no WAL sender) is accepted. With
// synchronous_standby_names set and its standby away, a commit would wait:
// the write is refused at once, as unavailable, and goes through once the
// standby is back.
func TestStandbyAway(t *testing.T) {
	ctx := t.Context()
	primary := pgtest.StartPrimary(t)
	standby := pgtest.StartStandby(t, primary)
	standby.Stop(t)
	db := primary.DB(t, primary.DSN())
	store := must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{}))
	if err := must(sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Replication: sqlseq.SingleServer})).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{store.CheckReplication(ctx), func() error { _, err := store.Allocate(ctx, "k", 10); return err }()} {
		if !errors.Is(err, sqlseq.ErrAsyncReplication) || !strings.Contains(err.Error(), "cannot be told from none") {
			t.Errorf("a primary whose standby is away: %v", err)
		}
	}
	lone := newStore(t, postgresBackend(), postgresBackend().open(t), sqlseq.Options{})
	if _, err := lone.Allocate(ctx, "k", 10); err != nil {
		t.Errorf("a server provably alone (max_wal_senders = 0): %v", err)
	}
	setSync(t, primary, "*", 0)
	// The reload reaches each backend in its own time: the pool's
	// connections may read the old, empty setting for a moment.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := store.Allocate(short, "k", 10)
		cancel()
		if errors.Is(err, sequence.ErrUnavailable) && strings.Contains(err.Error(), "none of them is connected") {
			break
		}
		if !errors.Is(err, sqlseq.ErrAsyncReplication) || time.Now().After(deadline) {
			t.Errorf("synchronous_standby_names set, its standby away: %v", err)
			break
		}
	}
	standby.Restart(t)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, err := store.Allocate(ctx, "k", 10)
		if err == nil {
			if r.First != 1 {
				t.Errorf("the first range once the standby is back: %v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby is back and Allocate still fails: %v", err)
		}
	}
}

// refusal is a range the checked Store must have refused, with what its
// error must say.
type refusal struct {
	what string
	err  error
	want string
	// late, if set, is the other refusal accepted: a commit whose
	// session had not yet read the change, caught after it returned
	// (ErrUnavailable saying late).
	late string
}

// judge judges a failover: the control, which accepted the risk, must
// repeat (else the test cannot see the hazard); the checked Store must
// repeat nothing, and have refused each range with ErrAsyncReplication.
func judge(t *testing.T, control bool, ranges []sequence.Range, failed int, refused ...refusal) {
	t.Helper()
	n := overlaps(ranges)
	t.Logf("%d ranges, %d failed while the standby was cut off, %d overlapping after the failover", len(ranges), failed, n)
	if control {
		if n == 0 {
			t.Fatal("no range was handed out twice: the test cannot see the hazard")
		}
		return
	}
	for _, r := range refused {
		before := errors.Is(r.err, sqlseq.ErrAsyncReplication) && strings.Contains(r.err.Error(), r.want)
		after := r.late != "" && errors.Is(r.err, sequence.ErrUnavailable) && strings.Contains(r.err.Error(), r.late)
		if !before && !after {
			t.Errorf("%s: %v; want ErrAsyncReplication saying %q", r.what, r.err, r.want)
		}
	}
	if n != 0 {
		t.Errorf("%d ranges handed out twice", n)
	}
}

// The settings change while the ledger runs: synchronous at start, then
// synchronous_standby_names is emptied and reloaded, the standby is cut
// off, the primary killed and the standby promoted. The Store notices the
// change at its next range and hands out none the standby lacks: no range
// twice. The control, which accepted the risk, repeats. (A session that
// has not yet read the reloaded setting commits, and the check after the
// commit refuses the range instead: both refusals are accepted.)
func TestFailoverSettingsChanged(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "checked", true: "control"}[control], func(t *testing.T) {
			o := sqlseq.Options{}
			if control {
				o.Replication = sqlseq.AcceptAsyncLoss
			}
			primary, standby, store := pair(t, true, o)
			first, err := store.Allocate(t.Context(), "orders", 100)
			if err != nil {
				t.Fatal(err)
			}
			setSync(t, primary, "", 0)
			var refused error
			if _, err := store.Allocate(t.Context(), "orders", 100); err != nil {
				refused = err
			}
			ranges, failed, _ := failover(t, primary, standby, store, single(t, primary, standby))
			judge(t, control, append(ranges, first), failed, refusal{"the range after the change", refused, "synchronous_standby_names is empty",
				"synchronous_standby_names emptied"})
		})
	}
}

// A second standby, with a replication slot, beside a synchronous one:
// away, it is seen by its slot, and connected again, asynchronous, by its
// state; each time the next range is refused, and a failover to it
// repeats nothing. The control, which accepted the risk, repeats. (A
// standby without a slot that is away cannot be seen: the failover must
// then promote a synchronous standby, as docs/stores.md says.)
func TestFailoverStandbyBackAsync(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "checked", true: "control"}[control], func(t *testing.T) {
			o := sqlseq.Options{}
			if control {
				o.Replication = sqlseq.AcceptAsyncLoss
			}
			primary, syncStandby, store := pair(t, true, o)
			setSync(t, primary, syncStandby.Name(), 1)
			first, err := store.Allocate(t.Context(), "orders", 100)
			if err != nil {
				t.Fatal(err)
			}
			late := pgtest.StartStandbySlot(t, primary)
			late.Stop(t)
			_, away := store.Allocate(t.Context(), "orders", 100)
			late.Restart(t)
			db := primary.DB(t, primary.DSN())
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'async'`).Scan(&n); err == nil && n == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the second standby never came back")
				}
			}
			_, back := store.Allocate(t.Context(), "orders", 100)
			ranges, failed, _ := failover(t, primary, late, store, single(t, primary, late))
			judge(t, control, append(ranges, first), failed,
				refusal{"the range while the second standby was away", away, "1 physical replication slots of standbys that are not connected", ""},
				refusal{"the range after the standby came back asynchronous", back, "1 of 2 standbys are not synchronous", ""})
		})
	}
}

// mariaPair starts a MariaDB primary writing a binary log and a replica,
// semi-synchronous when semi is set (AFTER_SYNC, with timeout), and returns
// them with a migrated ledger Store with options o on the primary.
func mariaPair(t *testing.T, semi bool, timeout time.Duration, o sqlseq.Options) (primary, replica *mysqltest.Server, store *sqlseq.Store) {
	t.Helper()
	primary = mysqltest.StartPrimary(t)
	replica = mysqltest.StartReplica(t, primary, semi)
	if semi {
		primary.SemiSync(t, true, timeout)
		db := primary.DB(t, primary.DSN())
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var name, v string
			if err := db.QueryRow(`SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'`).Scan(&name, &v); err == nil && v == "1" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the replica never became semi-synchronous")
			}
		}
	}
	store = must(sqlseq.New(primary.DB(t, primary.DSN()), sqlseq.MySQL, o))
	if err := must(sqlseq.New(primary.DB(t, primary.DSN()), sqlseq.MySQL, sqlseq.Options{Replication: sqlseq.SingleServer})).Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return primary, replica, store
}

// mariaFailover issues ranges from several goroutines on the primary, cuts
// the replica off, issues more, kills the primary and promotes the
// replica, and issues again there through a Store that declares it alone.
// It returns every range reserved and how many calls failed while the
// replica was cut off.
func mariaFailover(t *testing.T, primary, replica *mysqltest.Server, store *sqlseq.Store) ([]sequence.Range, int) {
	t.Helper()
	var d draws
	run := func(store *sqlseq.Store, rounds int, timeout time.Duration) { d.run(store, rounds, timeout) }
	run(store, 20, 10*time.Second)
	replica.CatchUp(t, primary)
	replica.Disconnect(t)
	before := d.failed
	run(store, 5, 2*time.Second)
	failed := d.failed - before
	primary.Kill(t)
	replica.Promote(t)
	promoted := must(sqlseq.New(replica.DB(t, replica.DSN()), sqlseq.MySQL, sqlseq.Options{Replication: sqlseq.SingleServer}))
	n := len(d.ranges)
	run(promoted, 20, 10*time.Second)
	if len(d.ranges) != n+80 {
		t.Fatalf("after the failover %d of 80 Allocates worked", len(d.ranges)-n)
	}
	return d.ranges, failed
}

// MariaDB: a primary with a binary log and an asynchronous replica is
// refused; with semi-synchronous replication (AFTER_SYNC) and a replica
// cut off, the primary waits, gives up after its timeout and commits
// anyway, and the Store, reading the status after the commit, uses
// nothing so committed: the failover repeats nothing. The control, which
// accepted the risk, repeats. A server without a binary log is alone,
// provably; a replica (read-only) is refused.
func TestMariaDBReplication(t *testing.T) {
	ctx := t.Context()
	lone := newStore(t, mysqlBackend(), mysqlBackend().open(t), sqlseq.Options{})
	if err := lone.CheckReplication(ctx); err != nil {
		t.Errorf("a server without a binary log: %v", err)
	}
	t.Run("async", func(t *testing.T) {
		primary, replica, store := mariaPair(t, false, 0, sqlseq.Options{})
		_, err := store.Allocate(ctx, "orders", 10)
		if !errors.Is(err, sqlseq.ErrAsyncReplication) || !strings.Contains(err.Error(), "rpl_semi_sync_master_enabled is OFF") {
			t.Errorf("a primary with an asynchronous replica: %v", err)
		}
		onReplica := must(sqlseq.New(replica.DB(t, replica.DSN()), sqlseq.MySQL, sqlseq.Options{Replication: sqlseq.SingleServer}))
		if err := onReplica.CheckReplication(ctx); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("a replica as the ledger: %v", err)
		}
		// A semi-synchronous primary with a second, asynchronous replica.
		primary.SemiSync(t, true, time.Minute)
		other := mysqltest.StartReplica(t, primary, true)
		other.CatchUp(t, primary)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			_, err = store.Allocate(ctx, "orders", 10)
			if err != nil && strings.Contains(err.Error(), "2 replicas are connected and 1 of them are semi-synchronous") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a semi-synchronous replica beside an asynchronous one: %v", err)
			}
		}
	})
	t.Run("control", func(t *testing.T) {
		primary, replica, store := mariaPair(t, false, 0, sqlseq.Options{Replication: sqlseq.AcceptAsyncLoss})
		ranges, failed := mariaFailover(t, primary, replica, store)
		n := overlaps(ranges)
		t.Logf("asynchronous, risk accepted: %d ranges, %d failed while the replica was cut off, %d overlapping after the failover", len(ranges), failed, n)
		if n == 0 {
			t.Fatal("no range was handed out twice: the test cannot see the hazard")
		}
	})
	t.Run("semisync", func(t *testing.T) {
		primary, replica, store := mariaPair(t, true, 300*time.Millisecond, sqlseq.Options{})
		if err := store.CheckReplication(ctx); err != nil {
			t.Fatalf("a semi-synchronous primary: %v", err)
		}
		ranges, failed := mariaFailover(t, primary, replica, store)
		n := overlaps(ranges)
		t.Logf("semi-synchronous: %d ranges, %d failed while the replica was cut off, %d overlapping after the failover", len(ranges), failed, n)
		if n != 0 {
			t.Errorf("%d ranges handed out twice", n)
		}
		if failed == 0 {
			t.Error("no Allocate failed while the replica was cut off: the primary did not wait for it, or the Store did not see it give up")
		}
	})
}

// freezeReceiver stops the standby's walreceiver (SIGSTOP), as a network
// that stalls would: the connection stays up, and the primary still lists
// the standby as synchronous, so the guard passes and commits wait. It
// returns a function that cuts the frozen receiver off for good (an empty
// primary_conninfo, then SIGKILL): what it had not received is lost.
func freezeReceiver(t *testing.T, standby *pgtest.Server) (cut func()) {
	t.Helper()
	db := standby.DB(t, standby.DSN())
	var pid int
	if err := db.QueryRow(`SELECT pid FROM pg_stat_wal_receiver`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return func() {
		for _, q := range []string{`ALTER SYSTEM SET primary_conninfo = ''`, `SELECT pg_reload_conf()`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		// A child killed makes the postmaster restart the others: wait
		// until the standby answers again.
		time.Sleep(200 * time.Millisecond)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			fresh, err := sql.Open("pgx", standby.DSN())
			if err != nil {
				t.Fatal(err)
			}
			var in bool
			err = fresh.QueryRow(`SELECT pg_is_in_recovery()`).Scan(&in)
			fresh.Close()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the standby did not come back after its receiver was killed")
			}
		}
	}
}

// waitSyncRep waits until n backends of primary wait for a synchronous
// standby (wait_event SyncRep).
func waitSyncRep(t *testing.T, primary *pgtest.Server, n int) {
	t.Helper()
	db := primary.DB(t, primary.DSN())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var got int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&got); err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			rows, _ := db.Query(`SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), state || ' ' || pid || ' blocked by ' || pg_blocking_pids(pid)::text, left(query, 60) FROM pg_stat_activity`)
			for rows != nil && rows.Next() {
				var a, b, c, q string
				rows.Scan(&a, &b, &c, &q)
				t.Logf("%s %s %s %s", a, b, c, q)
			}
			t.Fatalf("fewer than %d commits wait for the standby", n)
		}
	}
}

// A commit that waits for a synchronous standby is let go without it: the
// standby stalls (its receiver frozen, still listed as synchronous), and
// the operator empties synchronous_standby_names and reloads, or cancels
// the waiting backends (pg_cancel_backend); PostgreSQL then returns the
// commit as a success, with a WARNING only. The Store checks after each
// commit that a synchronous standby reports its WAL, and hands out none
// of those ranges: after the failover, no range twice. The control,
// which accepted the risk, repeats.
func TestFailoverWaitLetGo(t *testing.T) {
	for _, mode := range []string{"names", "cancel"} {
		for _, control := range []bool{false, true} {
			t.Run(mode+"/"+map[bool]string{false: "checked", true: "control"}[control], func(t *testing.T) {
				o := sqlseq.Options{}
				if control {
					o.Replication = sqlseq.AcceptAsyncLoss
				}
				primary, standby, store := pair(t, true, o)
				var d draws
				d.run(store, 10, 10*time.Second)
				cut := freezeReceiver(t, standby)
				done := make(chan struct{})
				go func() { d.run(store, 3, 20*time.Second); close(done) }()
				waitSyncRep(t, primary, 1)
				pdb := primary.DB(t, primary.DSN())
				switch mode {
				case "names":
					for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = ''`, `SELECT pg_reload_conf()`} {
						if _, err := pdb.Exec(q); err != nil {
							t.Fatal(err)
						}
					}
					<-done
				case "cancel":
					for stop := false; !stop; {
						select {
						case <-done:
							stop = true
						case <-time.After(50 * time.Millisecond):
							pdb.Exec(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)
						}
					}
				}
				cut()
				during := len(d.ranges)
				promote(t, &d, primary, standby, single(t, primary, standby))
				t.Logf("%d ranges before the failover (%d failed), %d after", during, d.failed, len(d.ranges)-during)
				judge(t, control, d.ranges, d.failed)
			})
		}
	}
}

// MariaDB: the semi-synchronous replica stalls (paused: still connected,
// still counted as a semi-synchronous client), commits wait for its
// acknowledgement, and the operator kills the waiting statements (KILL
// QUERY): MariaDB returns those commits as successes, and its status
// stays ON. The Store reads, after each commit, how many commits went
// without an acknowledgement (Rpl_semi_sync_master_no_tx), and hands out
// none of those ranges: after the failover, no range twice. The control,
// which accepted the risk, repeats.
func TestMariaDBWaitKilled(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "checked", true: "control"}[control], func(t *testing.T) {
			o := sqlseq.Options{}
			if control {
				o.Replication = sqlseq.AcceptAsyncLoss
			}
			primary, replica, store := mariaPair(t, true, time.Minute, o)
			var d draws
			d.run(store, 5, 10*time.Second)
			replica.CatchUp(t, primary)
			replica.Pause(t)
			done := make(chan struct{})
			go func() { d.run(store, 2, 30*time.Second); close(done) }()
			db := primary.DB(t, primary.DSN())
			for stop := false; !stop; {
				select {
				case <-done:
					stop = true
				case <-time.After(300 * time.Millisecond):
					rows, err := db.Query(`SELECT ID FROM information_schema.PROCESSLIST WHERE STATE LIKE '%semi-sync%'`)
					if err != nil {
						t.Fatal(err)
					}
					var ids []int64
					for rows.Next() {
						var id int64
						if rows.Scan(&id) == nil {
							ids = append(ids, id)
						}
					}
					rows.Close()
					for _, id := range ids {
						db.Exec(fmt.Sprintf("KILL QUERY %d", id))
					}
				}
			}
			during := len(d.ranges)
			primary.Kill(t)
			replica.Kill(t)
			replica.Restart(t)
			replica.Promote(t)
			promoted := must(sqlseq.New(replica.DB(t, replica.DSN()), sqlseq.MySQL, sqlseq.Options{Replication: sqlseq.SingleServer}))
			d.run(promoted, 10, 10*time.Second)
			t.Logf("%d ranges before the failover (%d failed), %d after", during, d.failed, len(d.ranges)-during)
			judge(t, control, d.ranges, d.failed)
		})
	}
}
