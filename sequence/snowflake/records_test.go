package snowflake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// The record leaser over a map: the promises of a Leaser. Every store
// with records runs the same suite over its own (sqlseq).
func TestRecordLeaser(t *testing.T) {
	stores := map[*testing.T]record.Store{}
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		s, ok := stores[t]
		if !ok {
			s = record.NewMemory()
			stores[t] = s
		}
		l, err := snowflake.NewRecordLeaser(s, name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, 50*time.Millisecond)
}

// Names are kept apart whatever bytes they hold: "a" and "a/id" are two
// series (their layouts differ, and neither refuses the other's), and an
// empty name or one of 256 bytes is refused.
func TestRecordLeaserNames(t *testing.T) {
	s := record.NewMemory()
	for i, name := range []string{"a", "a/id", "a/layout"} {
		l, err := snowflake.NewRecordLeaser(s, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Lease(t.Context(), sequencetest.LayoutOf(int64(2)<<i), time.Minute); err != nil {
			t.Errorf("series %q: %v", name, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 256)} {
		if _, err := snowflake.NewRecordLeaser(s, bad); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("name of %d bytes: %v", len(bad), err)
		}
	}
}

// An adopted lease (one an earlier release's layout held) keeps its id
// from every Lease until its deadline, and its bound passes to the next
// holder; a holder whose id is adopted past its own deadline loses it.
func TestRecordLeaserAdopt(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	l, err := snowflake.NewRecordLeaser(s, "ids")
	if err != nil {
		t.Fatal(err)
	}
	one := sequencetest.LayoutOf(1)
	bound := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	adopt := func(deadline time.Time) {
		t.Helper()
		if err := record.Update(ctx, s, func(tx *record.Tx) error { return l.Adopt(tx, 0, deadline, bound) }); err != nil {
			t.Fatal(err)
		}
	}
	adopt(time.Now().Add(300 * time.Millisecond))
	if _, err := l.Lease(ctx, one, time.Minute); !errors.Is(err, sequence.ErrUnavailable) {
		t.Fatalf("a lease of the adopted id before its deadline: %v; want ErrUnavailable", err)
	}
	time.Sleep(350 * time.Millisecond)
	a, err := l.Lease(ctx, one, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Bound().Equal(bound) {
		t.Errorf("the next holder's bound %v; want the adopted %v", a.Bound(), bound)
	}
	// The control: a's lease renews; once adopted past its deadline, it
	// does not.
	if err := a.Renew(ctx, time.Time{}); err != nil {
		t.Fatalf("control: %v", err)
	}
	adopt(time.Now().Add(2 * time.Minute))
	if err := a.Renew(ctx, time.Time{}); !errors.Is(err, sequence.ErrLeaseLost) {
		t.Errorf("a renewal after the id was adopted past the lease: %v; want ErrLeaseLost", err)
	}
}

// MoveLayouts moves a layout an earlier release remembered to the
// RecordLeaser's own record, and leaves a value that is no layout where
// the release reads it: the release's check refuses, the RecordLeaser
// keeps the layout. Again, it changes nothing. The control, a name whose
// layout was not moved, still reads its own.
func TestMoveLayouts(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	lay := snowflake.Layout{TimeBits: 41, WorkerBits: 1, SeqBits: 12, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}
	for _, name := range []string{"old", "control"} {
		if _, err := sequence.Remember(ctx, s, "snowflake layout "+name, lay.String()); err != nil {
			t.Fatal(err)
		}
		if name == "old" {
			for range 2 {
				if err := snowflake.MoveLayouts(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if got, _ := sequence.Remember(ctx, s, "snowflake layout old", lay.String()); got == lay.String() || !strings.Contains(got, "upgrade") {
		t.Errorf("the release reads the layout %q after the move; want a value that is no layout, saying to upgrade", got)
	}
	if got, _ := sequence.Remember(ctx, s, "snowflake layout control", lay.String()); got != lay.String() {
		t.Errorf("control: a layout not moved reads %q", got)
	}
	l, _ := snowflake.NewRecordLeaser(s, "old")
	if _, err := l.Lease(ctx, snowflake.Twitter, time.Minute); !errors.Is(err, snowflake.ErrLayout) {
		t.Errorf("a Lease in another layout after the move: %v; want ErrLayout", err)
	}
	if _, err := l.Lease(ctx, lay, time.Minute); err != nil {
		t.Errorf("a Lease in the moved layout: %v", err)
	}
}
