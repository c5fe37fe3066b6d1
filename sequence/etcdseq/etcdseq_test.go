package etcdseq_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/testserver"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/sequencetest"
)

// TestMain runs a child of the multi-process tests when the environment
// says so (see fault_test.go), and the tests otherwise.
func TestMain(m *testing.M) {
	recordtest.Main(openRecords)
	sequencetest.LeaserMain(openLeaser)
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	os.Exit(testserver.Chain(m.Run, etcdtest.Run, pgtest.Run))
}

// prefixes numbers the stores the tests make, each a ledger of its own in
// the shared cluster.
var prefixes atomic.Int64

// newStore returns a Store with a prefix of its own over cluster c.
func newStore(t testing.TB, c *etcdtest.Cluster, o etcdseq.Options) *etcdseq.Store {
	t.Helper()
	o.Prefix = fmt.Sprintf("test/%s/%d/", t.Name(), prefixes.Add(1))
	s, err := etcdseq.New(c.Client(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAllocatorConformance(t *testing.T) {
	c := etcdtest.Shared(t)
	sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator { return newStore(t, c, etcdseq.Options{}) })
}

func TestSegmentConformance(t *testing.T) {
	c := etcdtest.Shared(t)
	sequencetest.Run(t, func(t *testing.T) sequence.Gen {
		seg, err := sequence.NewSegment(newStore(t, c, etcdseq.Options{}), sequence.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return seg
	})
}

func TestJournalConformance(t *testing.T) {
	sequencetest.RunJournal(t, newStore(t, etcdtest.Shared(t), etcdseq.Options{}))
}

func TestReplayerConformance(t *testing.T) {
	sequencetest.RunReplayer(t, claim.Of(newStore(t, etcdtest.Shared(t), etcdseq.Options{})))
}

func TestCatalogConformance(t *testing.T) {
	sequencetest.RunCatalog(t, catalog.Of(newStore(t, etcdtest.Shared(t), etcdseq.Options{})))
}

// A counter is exact to math.MaxInt64: the last range ends there, and the
// next is refused with ErrExhausted, reserving nothing.
func TestExhausted(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	if err := s.Floor(ctx, "k", math.MaxInt64-10); err != nil {
		t.Fatal(err)
	}
	r, err := s.Allocate(ctx, "k", 10)
	if err != nil || r.Last != math.MaxInt64 {
		t.Fatalf("Allocate up to MaxInt64 = %v, %v", r, err)
	}
	if _, err := s.Allocate(ctx, "k", 1); !errors.Is(err, sequence.ErrExhausted) {
		t.Fatalf("Allocate past MaxInt64: %v, want ErrExhausted", err)
	}
	if last, err := s.Last(ctx, "k"); err != nil || last != math.MaxInt64 {
		t.Fatalf("Last = %d, %v", last, err)
	}
}

// Records, the store's identity and Ping.
func TestRecordIdentityPing(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Shared(t)
	s := newStore(t, c, etcdseq.Options{})
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	id1, err := s.StoreID(ctx)
	if err != nil || id1 == "" {
		t.Fatalf("StoreID = %q, %v", id1, err)
	}
	if id2, err := s.StoreID(ctx); err != nil || id2 != id1 {
		t.Fatalf("StoreID again = %q, %v; want %q", id2, err, id1)
	}
	if v, err := sequence.Remember(ctx, s, "place", "a"); err != nil || v != "a" {
		t.Fatalf("Record = %q, %v", v, err)
	}
	if v, err := sequence.Remember(ctx, s, "place", "b"); err != nil || v != "a" {
		t.Fatalf("Record again = %q, %v; want the first value", v, err)
	}
	if _, err := sequence.Remember(ctx, s, "", "x"); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Fatalf("Record with no name: %v", err)
	}
}

// New refuses what it cannot use.
func TestNewRefuses(t *testing.T) {
	if _, err := etcdseq.New(nil, etcdseq.Options{}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("New(nil): %v", err)
	}
	cli := etcdtest.Shared(t).Client(t)
	if _, err := etcdseq.New(cli, etcdseq.Options{Timeout: -1}); !errors.Is(err, sequence.ErrInvalidArgument) {
		t.Errorf("New with a negative timeout: %v", err)
	}
}

func TestExpirerConformance(t *testing.T) {
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	sequencetest.RunExpirer(t, s, sequencetest.AllocDraw(s))
}

// The Store's clock never goes back, and follows the latest process's.
func TestClock(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	a, err := s.Records().Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Records().Now(ctx)
	if err != nil || b.Before(a) || time.Since(b) > time.Minute || time.Until(b) > time.Minute {
		t.Fatalf("Now = %v then %v, %v", a, b, err)
	}
}
