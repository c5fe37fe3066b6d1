package sqlseq_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/sqlseq"
)

// backend is one database the tests run against.
type backend struct {
	name    string
	dialect sqlseq.Dialect
	driver  string                     // database/sql driver name
	dsn     func(tb testing.TB) string // a fresh, empty database
}

// open opens a fresh, empty database, closed when the test ends.
func (b backend) open(tb testing.TB) *sql.DB {
	db, _ := b.openDSN(tb)
	return db
}

func (b backend) openDSN(tb testing.TB) (*sql.DB, string) {
	dsn := b.dsn(tb)
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	dsns.Store(db, dsn)
	return db, dsn
}

// dsns remembers the DSN of each database the tests opened.
var dsns sync.Map

func dsnOf(t *testing.T, _ backend, db *sql.DB) string {
	v, ok := dsns.Load(db)
	if !ok {
		t.Fatal("no DSN for this database")
	}
	return v.(string)
}

func postgresBackend() backend {
	return backend{"postgres", sqlseq.Postgres, "pgx", func(tb testing.TB) string { return pgtest.Shared(tb).NewDatabase(tb) }}
}

func mysqlBackend() backend {
	return backend{"mariadb", sqlseq.MySQL, "mysql", func(tb testing.TB) string { return mysqltest.Shared(tb).NewDatabase(tb) }}
}

// backends are the databases every test runs on.
func backends() []backend { return []backend{postgresBackend(), mysqlBackend()} }

// newStore returns a migrated Store on db.
func newStore(t testing.TB, b backend, db *sql.DB, opts sqlseq.Options) *sqlseq.Store {
	t.Helper()
	s, err := sqlseq.New(db, b.dialect, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel() // a database of its own on each server: the two side by side
			db := b.open(t)
			store := newStore(t, b, db, sqlseq.Options{})
			sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator { return store })
			t.Run("Segment", func(t *testing.T) {
				sequencetest.Run(t, func(t *testing.T) sequence.Gen {
					seg := must(sequence.NewSegment(store, sequence.SegmentOptions{Step: 7, MinStep: 7, MaxStep: 50}))
					return seg
				})
			})
		})
	}
}

func TestAllocate(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			want := []sequence.Range{{First: 1, Last: 3}, {First: 4, Last: 4}, {First: 5, Last: 104}}
			for i, n := range []int64{3, 1, 100} {
				r, err := s.Allocate(ctx, "orders", n)
				if err != nil || r != want[i] {
					t.Fatalf("Allocate(%d) = %v, %v; want %v", n, r, err, want[i])
				}
			}
			if last, err := s.Last(ctx, "orders"); err != nil || last != 104 {
				t.Errorf("Last = %d, %v", last, err)
			}
			if _, err := s.Allocate(ctx, "orders", 0); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("Allocate(0): %v", err)
			}
			// Keys of any bytes and length, each a counter of its own.
			keys := []string{"", "\x00", "\x00\x01", "a|b", strings.Repeat("long", 5000), "Orders", "orders "}
			for _, k := range keys {
				if r, err := s.Allocate(ctx, k, 2); err != nil || r != (sequence.Range{First: 1, Last: 2}) {
					t.Errorf("key %.20q: %v, %v", k, r, err)
				}
			}
		})
	}
}

func TestExactAtTheTop(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			if err := s.Floor(ctx, "k", math.MaxInt64-5); err != nil {
				t.Fatal(err)
			}
			r, err := s.Allocate(ctx, "k", 5)
			if err != nil || r != (sequence.Range{First: math.MaxInt64 - 4, Last: math.MaxInt64}) {
				t.Fatalf("Allocate(5) = %v, %v", r, err)
			}
			if _, err := s.Allocate(ctx, "k", 1); !errors.Is(err, sequence.ErrExhausted) {
				t.Fatalf("Allocate past the top: %v", err)
			}
			if last, _ := s.Last(ctx, "k"); last != math.MaxInt64 {
				t.Errorf("mark moved to %d", last)
			}
			// A floor never lowers.
			if err := s.Floor(ctx, "k", 10); err != nil {
				t.Fatal(err)
			}
			if last, _ := s.Last(ctx, "k"); last != math.MaxInt64 {
				t.Errorf("floor lowered the mark to %d", last)
			}
			if err := s.Floor(ctx, "k", -1); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("Floor(-1): %v", err)
			}
		})
	}
}

// Many stores over separate connection pools, as separate processes would
// have, never hand out one number twice.
func TestConcurrentStores(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			newStore(t, b, db, sqlseq.Options{})
			const stores, workers, calls = 4, 4, 60
			var mu sync.Mutex
			seen := map[int64]bool{}
			repeats := 0
			var wg sync.WaitGroup
			for i := 0; i < stores; i++ {
				s, err := sqlseq.New(db, b.dialect, sqlseq.Options{}) // one table, separate Stores
				if err != nil {
					t.Fatal(err)
				}
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for c := 0; c < calls; c++ {
							r, err := s.Allocate(ctx, "shared", 3)
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
					}()
				}
			}
			wg.Wait()
			if repeats != 0 || len(seen) != stores*workers*calls*3 {
				t.Errorf("%d repeats, %d numbers", repeats, len(seen))
			}
		})
	}
}

func TestOptions(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			a := newStore(t, b, db, sqlseq.Options{Table: "ledger_a"})
			c := newStore(t, b, db, sqlseq.Options{Table: "ledger_b"})
			a.Allocate(ctx, "k", 10)
			if r, err := c.Allocate(ctx, "k", 1); err != nil || r.First != 1 {
				t.Errorf("a second table shares counters: %v, %v", r, err)
			}
			// Migrate again changes nothing.
			if err := a.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if last, _ := a.Last(ctx, "k"); last != 10 {
				t.Errorf("Migrate lost the mark: %d", last)
			}
			// Reserved words and mixed case are names like any other; the
			// mixed-case name is the table its unquoted form names.
			// The longest name: its _workers table keeps all its bytes.
			long := "l" + strings.Repeat("x", 54)
			for _, name := range []string{"select", "user", "Ledger_C", long} {
				if r, err := newStore(t, b, db, sqlseq.Options{Table: name}).Allocate(ctx, "k", 1); err != nil || r.First != 1 {
					t.Errorf("table %q: %v, %v", name, r, err)
				}
			}
			if _, err := db.ExecContext(ctx, "SELECT last FROM ledger_c"); err != nil && b.dialect == sqlseq.Postgres {
				t.Errorf("table Ledger_C is not ledger_c: %v", err)
			}
			if _, err := sqlseq.New(db, b.dialect, sqlseq.Options{Table: "s" + strings.Repeat("x", 62) + "." + long}); err != nil {
				t.Errorf("the longest schema and table: %v", err)
			}
			for _, bad := range []string{"a b", "1x", "x;DROP TABLE y", strings.Repeat("x", 56), "s." + strings.Repeat("x", 56), strings.Repeat("x", 64) + ".t", "a.b.c"} {
				if _, err := sqlseq.New(db, b.dialect, sqlseq.Options{Table: bad}); !errors.Is(err, sequence.ErrInvalidArgument) {
					t.Errorf("table %q: %v", bad, err)
				}
			}
			if _, err := sqlseq.New(db, "oracle", sqlseq.Options{}); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("dialect oracle: %v", err)
			}
			// Without Migrate, a clear error, not ErrUnavailable.
			none, _ := sqlseq.New(db, b.dialect, sqlseq.Options{Table: "missing"})
			if _, err := none.Allocate(ctx, "k", 1); err == nil || errors.Is(err, sequence.ErrUnavailable) {
				t.Errorf("no table: %v", err)
			}
		})
	}
}

// A row whose key bytes do not match its hash is refused, never used.
func TestCorruptRow(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			if _, err := s.Allocate(ctx, "victim", 5); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE sn_ledger SET k = 'impostor'`); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Allocate(ctx, "victim", 1); !errors.Is(err, sqlseq.ErrCorrupt) {
				t.Errorf("Allocate on a row of another key: %v", err)
			}
			if err := s.Floor(ctx, "victim", 100); !errors.Is(err, sqlseq.ErrCorrupt) {
				t.Errorf("Floor on a row of another key: %v", err)
			}
			if _, err := s.Last(ctx, "victim"); !errors.Is(err, sqlseq.ErrCorrupt) {
				t.Errorf("Last on a row of another key: %v", err)
			}
		})
	}
}

// Processes that create the table at once all succeed.
func TestMigrateConcurrently(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			var dbs []*sql.DB
			db, dsn := b.openDSN(t)
			dbs = append(dbs, db)
			for range 7 {
				other, err := sql.Open(b.driver, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { other.Close() })
				dbs = append(dbs, other)
			}
			var wg sync.WaitGroup
			for _, db := range dbs {
				wg.Go(func() {
					s, _ := sqlseq.New(db, b.dialect, sqlseq.Options{})
					if err := s.Migrate(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		})
	}
}

// A ledger's identity is one for every Store on its table, written once by
// whichever asks first, and another for another table or database. No
// counter key can reach its row.
func TestStoreID(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			ids := make([]string, 8)
			var wg sync.WaitGroup
			for i := range ids {
				s := newStore(t, b, db, sqlseq.Options{})
				wg.Go(func() {
					var err error
					if ids[i], err = s.StoreID(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if !strings.HasPrefix(ids[0], "sqlseq sn_ledger ") || len(slices.Compact(slices.Clone(ids))) != 1 {
				t.Fatalf("StoreID of 8 Stores on one table: %q, want one, starting %q", ids, "sqlseq sn_ledger ")
			}
			other, err := newStore(t, b, db, sqlseq.Options{Table: "other"}).StoreID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			elsewhere, err := newStore(t, b, b.open(t), sqlseq.Options{}).StoreID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if other == ids[0] || elsewhere == ids[0] || other == elsewhere {
				t.Errorf("StoreID: %q on the table, %q on another table, %q in another database; want three", ids[0], other, elsewhere)
			}
			// Keys go on as before, the empty one included.
			s := newStore(t, b, db, sqlseq.Options{})
			for _, key := range []string{"", "\x00", string(make([]byte, 32))} {
				if r, err := s.Allocate(ctx, key, 3); err != nil || r != (sequence.Range{First: 1, Last: 3}) {
					t.Errorf("Allocate(%q, 3) = %v, %v; want [1, 3]", key, r, err)
				}
			}
		})
	}
}

// A key up to MaxKeyLen bytes is taken by every method, and a longer one
// is refused before any statement (MariaDB would close the connection).
func TestMaxKeyLen(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			s := newStore(t, b, db, sqlseq.Options{})
			longest := strings.Repeat("k", sqlseq.MaxKeyLen)
			if r, err := s.Allocate(ctx, longest, 2); err != nil || r.First != 1 {
				t.Fatalf("Allocate of a MaxKeyLen key: %v, %v", r, err)
			}
			tooLong := longest + "k"
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			_, errA := s.Allocate(ctx, tooLong, 1)
			_, errL := s.Last(ctx, tooLong)
			_, errG := s.Gapless().Next(sqlseq.WithTx(ctx, tx), tooLong)
			for _, err := range []error{errA, s.Floor(ctx, tooLong, 5), errL, errG} {
				if !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(err.Error(), "MaxKeyLen") {
					t.Errorf("a key of MaxKeyLen+1 bytes: %v; want an error wrapping ErrInvalidArgument", err)
				}
			}
		})
	}
}

func TestExpirer(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := newStore(t, b, b.open(t), sqlseq.Options{})
			sequencetest.RunExpirer(t, s, sequencetest.AllocDraw(s))
		})
	}
}
