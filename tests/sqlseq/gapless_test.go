package sqlseq_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/sqlseq"
)

// committed collects what gapless runs committed, and the numbers of
// commits whose outcome is unknown (the connection died during COMMIT).
type committed struct {
	mu        sync.Mutex
	nums      []int64
	uncertain []int64
	failures  int // errors other than those a restart causes
}

// check: the committed numbers, with some of the uncertain ones, are
// exactly 1..N, none twice.
func (c *committed) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	slices.Sort(c.nums)
	for i := 1; i < len(c.nums); i++ {
		if c.nums[i] == c.nums[i-1] {
			t.Fatalf("%d committed twice", c.nums[i])
		}
	}
	top := int64(0)
	if len(c.nums) > 0 {
		top = c.nums[len(c.nums)-1]
	}
	have := map[int64]bool{}
	for _, n := range c.nums {
		have[n] = true
	}
	for _, n := range c.uncertain {
		have[n] = true
	}
	for n := int64(1); n <= top; n++ {
		if !have[n] {
			t.Fatalf("gap: %d is missing among %d committed numbers up to %d", n, len(c.nums), top)
		}
	}
}

func TestGaplessNeedsATransaction(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			g := newStore(t, b, b.open(t), sqlseq.Options{}).Gapless()
			if _, err := g.Next(context.Background(), "inv"); !errors.Is(err, sqlseq.ErrNoTx) || !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("Next without a transaction: %v", err)
			}
		})
	}
}

// gaplessWorkers runs 16 goroutines that draw invoice numbers through an
// sn Generator in transactions they commit or roll back at random.
func gaplessWorkers(t *testing.T, db func() *sql.DB, g *sn.Generator, c *committed, stop <-chan struct{}, tolerate func(error) bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err := func() error {
					tx, err := db().BeginTx(ctx, nil)
					if err != nil {
						return err
					}
					var mine []int64
					for range 1 + rng.IntN(2) {
						s, err := g.Next(sqlseq.WithTx(ctx, tx))
						if err != nil {
							tx.Rollback()
							return err
						}
						n, _ := strconv.ParseInt(strings.TrimPrefix(s, "INV-"), 10, 64)
						mine = append(mine, n)
					}
					if rng.IntN(3) == 0 {
						return tx.Rollback()
					}
					if err := tx.Commit(); err != nil {
						c.mu.Lock()
						c.uncertain = append(c.uncertain, mine...)
						c.mu.Unlock()
						return err
					}
					c.mu.Lock()
					c.nums = append(c.nums, mine...)
					c.mu.Unlock()
					return nil
				}()
				cancel()
				if err != nil && !tolerate(err) {
					c.mu.Lock()
					c.failures++
					c.mu.Unlock()
					t.Errorf("worker %d: %v", w, err)
					return
				}
			}
		}(w)
	}
	return &wg
}

// 16 goroutines, random commits and rollbacks: the committed numbers are
// exactly 1..N, and no caller failed for want of the lock.
func TestGaplessConcurrent(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			store := newStore(t, b, db, sqlseq.Options{})
			g := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", store.Gapless()))
			var c committed
			stop := make(chan struct{})
			wg := gaplessWorkers(t, func() *sql.DB { return db }, g, &c, stop, func(error) bool { return false })
			// At least 1.5 s, and until 50 numbers were committed (a busy
			// machine commits fewer by then), for at most 60 s.
			time.Sleep(1500 * time.Millisecond)
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				c.mu.Lock()
				n := len(c.nums)
				c.mu.Unlock()
				if n >= 50 {
					break
				}
			}
			close(stop)
			wg.Wait()
			c.check(t)
			if c.failures != 0 || len(c.nums) < 50 {
				t.Fatalf("%d failures, %d numbers committed", c.failures, len(c.nums))
			}
			t.Logf("%d numbers committed with no gap; 0 lock failures", len(c.nums))
		})
	}
}

// The database is killed and restarted while callers draw and commit:
// transactions in flight are lost, and still no committed number is
// missing or repeated.
func TestGaplessDatabaseRestart(t *testing.T) {
	type server interface {
		killable
		NewDatabase(testing.TB) string
		DB(testing.TB, string) *sql.DB
	}
	for _, tc := range []struct {
		b   backend
		srv func(t *testing.T) server
	}{
		{postgresBackend(), func(t *testing.T) server { return pgtest.Start(t) }},
		{mysqlBackend(), func(t *testing.T) server { return mysqltest.Start(t) }},
	} {
		t.Run(tc.b.name, func(t *testing.T) {
			srv := tc.srv(t)
			dsn := srv.NewDatabase(t)
			var mu sync.Mutex
			db := srv.DB(t, dsn)
			store := newStore(t, tc.b, db, sqlseq.Options{})
			g := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", store.Gapless()))
			current := func() *sql.DB { mu.Lock(); defer mu.Unlock(); return db }
			var c committed
			stop := make(chan struct{})
			wg := gaplessWorkers(t, current, g, &c, stop, func(err error) bool { return true })
			time.Sleep(500 * time.Millisecond)
			srv.Kill(t)
			time.Sleep(200 * time.Millisecond)
			srv.Restart(t)
			mu.Lock()
			db = srv.DB(t, dsn) // the old pool's connections are dead
			mu.Unlock()
			// The Generator keeps its Store, over the old pool: give the
			// workers a new Store over the new pool.
			store2 := newStore(t, tc.b, current(), sqlseq.Options{})
			g2 := sn.MustNew(`INV-@<seq, width=6>`, sn.WithSequence("seq", store2.Gapless()))
			close(stop)
			wg.Wait()
			stop2 := make(chan struct{})
			wg2 := gaplessWorkers(t, current, g2, &c, stop2, func(error) bool { return false })
			time.Sleep(700 * time.Millisecond)
			close(stop2)
			wg2.Wait()
			c.check(t)
			t.Logf("%d numbers committed across the restart (%d of unknown outcome), no gap, no repeat", len(c.nums), len(c.uncertain))
		})
	}
}

// A client process killed in the middle of its transaction: the database
// rolls it back, and its number goes to the next caller.
func TestGaplessClientKilled(t *testing.T) {
	if os.Getenv("SQLSEQ_CHILD") != "" {
		return
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			store := newStore(t, b, db, sqlseq.Options{})
			ctx := context.Background()
			tx, _ := db.BeginTx(ctx, nil)
			first, err := store.Gapless().Next(sqlseq.WithTx(ctx, tx), "inv")
			if err != nil || first != 1 {
				t.Fatalf("first = %d, %v", first, err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			dsn := dsnOf(t, b, db)
			child := exec.Command(os.Args[0], "-test.run", "^TestGaplessChild$", "-test.v")
			child.Env = append(os.Environ(), "SQLSEQ_CHILD="+string(b.dialect)+"|"+dsn)
			out, _ := child.StdoutPipe()
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			line := ""
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "drew ") {
					line = sc.Text()
					break
				}
			}
			if line != "drew 2" {
				child.Process.Kill()
				t.Fatalf("child said %q, want drew 2", line)
			}
			child.Process.Kill() // in the middle of its transaction
			child.Wait()
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			tx, _ = db.BeginTx(wctx, nil)
			n, err := store.Gapless().Next(sqlseq.WithTx(wctx, tx), "inv")
			if err != nil || n != 2 {
				t.Fatalf("after the child died: %d, %v; want 2 again", n, err)
			}
			tx.Commit()
		})
	}
}

// TestGaplessChild is the child of TestGaplessClientKilled: it draws in a
// transaction it never ends.
func TestGaplessChild(t *testing.T) {
	spec := os.Getenv("SQLSEQ_CHILD")
	if spec == "" {
		return
	}
	dialect, dsn, _ := strings.Cut(spec, "|")
	driver := "pgx"
	if sqlseq.Dialect(dialect) == sqlseq.MySQL {
		driver = "mysql"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := sqlseq.New(db, sqlseq.Dialect(dialect), sqlseq.Options{})
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.Gapless().Next(sqlseq.WithTx(ctx, tx), "inv")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("drew %d\n", n)
	time.Sleep(time.Minute)
}

// BenchmarkGapless measures commits per second of one-number transactions
// at 1 and 16 concurrent callers on one key.
func BenchmarkGapless(b *testing.B) {
	for _, be := range backends() {
		db := be.open(b)
		store := newStore(b, be, db, sqlseq.Options{})
		g := store.Gapless()
		for _, callers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/callers=%d", be.name, callers), func(b *testing.B) {
				// Exactly callers goroutines (RunParallel would start a
				// multiple of GOMAXPROCS), sharing b.N transactions.
				var left atomic.Int64
				left.Store(int64(b.N))
				start := time.Now()
				var wg sync.WaitGroup
				for range callers {
					wg.Go(func() {
						ctx := context.Background()
						for left.Add(-1) >= 0 {
							tx, err := db.BeginTx(ctx, nil)
							if err == nil {
								_, err = g.Next(sqlseq.WithTx(ctx, tx), "bench")
							}
							if err == nil {
								err = tx.Commit()
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
			})
		}
	}
}

// txGen draws each number from Gapless in a transaction of its own, so
// that the conformance suite, which knows no transactions, can run on it.
type txGen struct {
	db *sql.DB
	g  *sqlseq.Gapless
}

func (t txGen) Next(ctx context.Context, key string) (int64, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	n, err := t.g.Next(sqlseq.WithTx(ctx, tx), key)
	if err != nil {
		tx.Rollback()
		return 0, err
	}
	return n, tx.Commit()
}

func TestGaplessConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel() // a database of its own on each server: the two side by side
			db := b.open(t)
			store := newStore(t, b, db, sqlseq.Options{})
			sequencetest.RunPerNumber(t, func(t *testing.T) sequence.Gen { return txGen{db, store.Gapless()} })
		})
	}
}

// The gapless path passes the catalog as a Segment's does: an invoice
// template whose edit drops reset=year would commit a number the first
// version committed (INV-ZETA-2025-000001 both times); the edited
// template is refused at Enroll, naming the first, on both databases, and
// draws nothing. The control, the first version again in another
// spelling, continues its counter.
func TestGaplessCatalog(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			db := b.open(t)
			store := newStore(t, b, db, sqlseq.Options{})
			clock := func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }
			first := sn.MustNew(`INV-ZETA-@<date, format=yyyy>-@<seq, width=6, reset=year>`, sn.WithSequence("seq", store.Gapless()), sn.WithClock(clock))
			if err := first.Enroll(ctx); err != nil {
				t.Fatal(err)
			}
			draw := func(g *sn.Generator) (string, error) {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				n, err := g.Next(sqlseq.WithTx(ctx, tx))
				if err != nil {
					tx.Rollback()
					return "", err
				}
				return n, tx.Commit()
			}
			if n, err := draw(first); err != nil || n != "INV-ZETA-2025-000001" {
				t.Fatalf("the first invoice: %q, %v", n, err)
			}
			edited := sn.MustNew(`INV-ZETA-@<date, format=yyyy>-@<seq, width=6>`, sn.WithSequence("seq", store.Gapless()), sn.WithClock(clock))
			if err := edited.Enroll(ctx); !errors.Is(err, sn.ErrAmbiguous) {
				t.Errorf("Enroll of the edit that drops reset=year: %v", err)
			}
			if n, err := draw(edited); err == nil {
				t.Errorf("the edited template drew %q", n)
			}
			again := sn.MustNew(`INV-ZETA-@<date,format=yyyy>-@<seq,width=6,reset=year>`, sn.WithSequence("seq", store.Gapless()), sn.WithClock(clock))
			if n, err := draw(again); err != nil || n != "INV-ZETA-2025-000002" {
				t.Errorf("the first template in another spelling: %q, %v", n, err)
			}
			es, err := catalog.Of(store.Gapless()).Entries(ctx)
			if err != nil || len(es) != 1 {
				t.Errorf("the catalog: %d entries, %v; want the invoice template's", len(es), err)
			}
		})
	}
}
