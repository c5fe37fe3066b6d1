package sqliteseq_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/internal/guardtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqliteseq"
)

// TestMain runs a child process of the process tests when the
// environment says so, and the tests otherwise.
func TestMain(m *testing.M) {
	recordtest.Main(openRecords)
	sequencetest.LeaserMain(openLeaser)
	if path := os.Getenv(allocEnv); path != "" {
		os.Exit(allocChild(path))
	}
	os.Exit(m.Run())
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// open opens a Store in a fresh file of the test's, closed when it ends.
func open(t testing.TB) *sqliteseq.Store {
	t.Helper()
	s, err := sqliteseq.Open(filepath.Join(t.TempDir(), "sn.db"), sqliteseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openRecords(path string) (record.Store, func(), error) {
	s, err := sqliteseq.Open(path, sqliteseq.Options{})
	if err != nil {
		return nil, nil, err
	}
	return s.Records(), func() { s.Close() }, nil
}

func openLeaser(path string) (snowflake.Leaser, func(), error) {
	s, err := sqliteseq.Open(path, sqliteseq.Options{})
	if err != nil {
		return nil, nil, err
	}
	l, err := snowflake.NewRecordLeaser(s.Records(), "snowflake")
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return l, func() { s.Close() }, nil
}

func TestAllocatorConformance(t *testing.T) {
	t.Parallel() // a file of its own: the fsyncs of the tests overlap
	sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator { return open(t) })
}

func TestSegmentConformance(t *testing.T) {
	t.Parallel() // a file of its own: the fsyncs of the tests overlap
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		seg := must(sequence.NewSegment(open(t), sequence.SegmentOptions{}))
		t.Cleanup(func() { seg.Close() })
		return seg
	})
}

func TestJournal(t *testing.T) { sequencetest.RunJournal(t, open(t)) }

func TestExpirer(t *testing.T) {
	s := open(t)
	sequencetest.RunExpirer(t, s, sequencetest.AllocDraw(s))
}

func TestReplayer(t *testing.T) { sequencetest.RunReplayer(t, claim.Of(open(t))) }

func TestCatalog(t *testing.T) { sequencetest.RunCatalog(t, catalog.Of(open(t))) }

// The records, by goroutines and by processes killed with SIGKILL while
// they write (recordtest).
func TestRecords(t *testing.T) {
	t.Parallel() // a file of its own: the fsyncs of the tests overlap
	path := filepath.Join(t.TempDir(), "records.db")
	s := must(sqliteseq.Open(path, sqliteseq.Options{}))
	s.Close()
	recordtest.Run(t, openRecords, path)
}

// The worker-id leases (snowflake.RecordLeaser over the records), in
// this process and across processes killed with SIGKILL.
func TestLeaser(t *testing.T) {
	t.Parallel() // a file of its own: the fsyncs of the tests overlap
	s := open(t)
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		return must(snowflake.NewRecordLeaser(s.Records(), name))
	}, 300*time.Millisecond)
}

func TestLeaserProcesses(t *testing.T) {
	t.Parallel() // a file of its own: the fsyncs of the tests overlap
	path := filepath.Join(t.TempDir(), "leases.db")
	s := must(sqliteseq.Open(path, sqliteseq.Options{}))
	s.Close()
	sequencetest.RunLeaserProcesses(t, path, time.Second) // an fsync per renewal: a loaded machine is slow
}

// The retention guard over a file: counters per second expire by this
// machine's clock (guardtest.Run).
func TestClockGuard(t *testing.T) {
	guardtest.Run(t, func(t *testing.T) guardtest.Store { return open(t) })
}

// A Store reopened continues above its mark; its identity stays, and
// another file's differs.
func TestRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sn.db")
	s := must(sqliteseq.Open(path, sqliteseq.Options{}))
	r1 := must(s.Allocate(ctx, "orders", 10))
	id := must(s.StoreID(ctx))
	s.Close()
	s = must(sqliteseq.Open(path, sqliteseq.Options{}))
	defer s.Close()
	r2 := must(s.Allocate(ctx, "orders", 10))
	if r1 != (sequence.Range{First: 1, Last: 10}) || r2 != (sequence.Range{First: 11, Last: 20}) {
		t.Errorf("ranges %v then, after a reopen, %v; want 1-10 and 11-20", r1, r2)
	}
	if again := must(s.StoreID(ctx)); again != id || id == must(open(t).StoreID(ctx)) {
		t.Errorf("StoreID %q, reopened %q: want equal, and another file's different", id, again)
	}
	events, head, err := journal.ReadJournal(ctx, journal.Of(s), "orders")
	if err != nil || len(events) != 2 || journal.VerifyChain("orders", events, head) != nil {
		t.Errorf("journal of orders: %d records, %v; want 2 that verify", len(events), err)
	}
}

// Bad arguments and states each get a clear error, at once.
func TestErrors(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	if _, err := sqliteseq.Open(filepath.Join(dir, "no", "such", "sn.db"), sqliteseq.Options{}); !errors.Is(err, sequence.ErrInvalidArgument) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open in a missing directory: %v", err)
	}
	if _, err := sqliteseq.Open(filepath.Join(dir, "sn.db"), sqliteseq.Options{BusyTimeout: -1}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("a negative BusyTimeout: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600)
	if _, err := sqliteseq.Open(junk, sqliteseq.Options{}); err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("Open of a file that is not SQLite: %v", err)
	}
	s := open(t)
	if _, err := s.Allocate(ctx, "k", 0); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("Allocate 0: %v", err)
	}
	if _, err := s.Allocate(ctx, strings.Repeat("k", sqliteseq.MaxKeyLen+1), 1); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("a key past MaxKeyLen: %v", err)
	}
	if err := s.Floor(ctx, "k", -1); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("a negative floor: %v", err)
	}
	if err := s.Floor(ctx, "full", 1<<63-1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, "full", 1); !errors.Is(err, sequence.ErrExhausted) {
		t.Errorf("past MaxInt64: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	s.Close()
	if _, err := s.Allocate(ctx, "k", 1); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Allocate after Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Close twice: %v", err)
	}
	if _, err := open(t).Allocate(canceled(), "k", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a done context: %v", err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// The file's contents changed by hand: the versions' counter set back
// (then reopened, it is raised above every version again), or not a
// number, and a counter that is not a number: each is ErrCorrupt or
// repaired, never a version given twice.
func TestHandEditedMeta(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sn.db")
	s := must(sqliteseq.Open(path, sqliteseq.Options{}))
	recs := s.Records()
	if ok, err := recs.Commit(ctx, nil, []record.Op{record.Put("a", []byte("1"))}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	a := must(recs.Get(ctx, "a"))[0]
	db := must(sql.Open("sqlite", path))
	defer db.Close()
	if _, err := db.Exec(`UPDATE sn_meta SET value = '0' WHERE name = 'ver'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = must(sqliteseq.Open(path, sqliteseq.Options{}))
	defer s.Close()
	recs = s.Records()
	if ok, err := recs.Commit(ctx, nil, []record.Op{record.Put("b", []byte("2"))}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if b := must(recs.Get(ctx, "b"))[0]; b.Version <= a.Version {
		t.Errorf("after the versions' counter was set back and the file reopened: version %d, not above %d", b.Version, a.Version)
	}
	if _, err := db.Exec(`UPDATE sn_meta SET value = 'junk' WHERE name = 'ver'`); err != nil {
		t.Fatal(err)
	}
	if _, err := recs.Commit(ctx, nil, []record.Op{record.Put("c", []byte("3"))}); !errors.Is(err, sqliteseq.ErrCorrupt) {
		t.Errorf("a commit with the versions' counter not a number: %v; want ErrCorrupt", err)
	}
	if _, err := s.Allocate(ctx, "k", 1); err == nil {
		t.Fatal("an allocation with the versions' counter not a number journaled")
	}
	if _, err := db.Exec(`INSERT INTO sn_counters (k, last) VALUES (CAST('x' AS BLOB), 'abc')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, "x", 1); !errors.Is(err, sqliteseq.ErrCorrupt) {
		t.Errorf("a counter that is not a number: %v; want ErrCorrupt", err)
	}
}
