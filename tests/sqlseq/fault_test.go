package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// killable is a database server of a test's own.
type killable interface {
	Kill(testing.TB)
	Restart(testing.TB)
}

// The database dies mid-run (kill -9) and comes back: callers get
// ErrUnavailable within their context while it is down, then numbers
// again, and no number is ever issued twice.
func TestKilled(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.Start(t)
		killedRun(t, srv, postgresBackend(), srv.DB(t, srv.NewDatabase(t)))
	})
	t.Run("mariadb", func(t *testing.T) {
		srv := mysqltest.Start(t)
		killedRun(t, srv, mysqlBackend(), srv.DB(t, srv.NewDatabase(t)))
	})
}

func killedRun(t *testing.T, srv killable, b backend, db *sql.DB) {
	store := newStore(t, b, db, sqlseq.Options{Retries: 2})
	seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 5, MinStep: 5, MaxStep: 5, FetchTimeout: time.Second}))
	defer seg.Close()

	var (
		mu          sync.Mutex
		seen        = map[int64]bool{}
		repeats     int
		unavailable atomic.Int64
		other       atomic.Value
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				n, err := seg.Next(ctx, "orders")
				cancel()
				switch {
				case err == nil:
					mu.Lock()
					if seen[n] {
						repeats++
					}
					seen[n] = true
					mu.Unlock()
				case errors.Is(err, sequence.ErrUnavailable):
					unavailable.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					other.Store(err)
					return
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	waitFor := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d numbers after 30s (want %d); last other error: %v", count(), n, other.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(200)
	srv.Kill(t)
	deadline := time.Now().Add(20 * time.Second)
	for unavailable.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no caller saw ErrUnavailable while the database was down")
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := count()
	srv.Restart(t)
	waitFor(before + 200)
	close(stop)
	wg.Wait()
	if err := other.Load(); err != nil {
		t.Fatalf("an error that is not ErrUnavailable: %v", err)
	}
	if repeats != 0 {
		t.Fatalf("%d repeats in %d numbers", repeats, count())
	}
	t.Logf("%d numbers, %d ErrUnavailable while down, 0 repeats", count(), unavailable.Load())
}

// Connections dropped by the server mid-run, and serialization failures
// under SERIALIZABLE, are retried: every call succeeds, no number repeats.
func TestTransientErrorsRetried(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Shared(t)
	dsn := srv.NewDatabase(t)
	admin := srv.DB(t, srv.DSN())
	db := srv.DB(t, dsn)
	b := postgresBackend()
	store := newStore(t, b, db, sqlseq.Options{Retries: 30})
	var dbname string
	if err := db.QueryRowContext(ctx, `SELECT current_database()`).Scan(&dbname); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE "`+dbname+`" SET default_transaction_isolation TO 'serializable'`); err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0) // new connections take the setting
	var mu sync.Mutex
	seen := map[int64]bool{}
	repeats := 0
	stop := make(chan struct{})
	var killer sync.WaitGroup
	killer.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbname)
		}
	})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for range 60 {
				var r sequence.Range
				var err error
				for try := 0; try < 5; try++ { // a call may run out of retries: ErrUnavailable, never another error
					cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
					r, err = store.Allocate(cctx, "hot", 2)
					cancel()
					if !errors.Is(err, sequence.ErrUnavailable) {
						break
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for v := r.First; v <= r.Last; v++ {
					if seen[v] {
						repeats++
					}
					seen[v] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	if repeats != 0 {
		t.Fatalf("%d repeats", repeats)
	}
	t.Logf("%d numbers with connections killed every 50ms under SERIALIZABLE, 0 repeats", len(seen))
}
