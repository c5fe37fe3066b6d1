package engine

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// An earlier release kept the guard's mark as the last number of the
// counter of the mark's key. A store whose clock read three hours later
// then, and reads t0 now (a failover to a server whose clock is behind),
// refuses a draw at t0 after the upgrade as before it: the mark is read
// from that counter when the records have none, and written into them.
// The control, the same store without that counter, lets the draw go
// ahead: the test would see a mark that was not read.
func TestGuardEarlierMark(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	ahead := t0.Add(3 * time.Hour)
	part := &Part{Reset: builtin.Second}
	for _, earlier := range []bool{true, false} {
		mem := &sequence.Memory{Clock: func() time.Time { return t0 }}
		if earlier {
			if err := mem.Floor(ctx, "orders|clock", ahead.UnixMicro()); err != nil {
				t.Fatal(err)
			}
		}
		g := newGuard(part, mem, "orders", DefaultRetention)
		err := g.check(ctx, t0.Unix(), t0, false, "orders|2024")
		if !earlier {
			if err != nil {
				t.Fatalf("control, no earlier mark: %v", err)
			}
			continue
		}
		if !errors.Is(err, sequence.ErrClockRollback) {
			t.Fatalf("a store whose earlier release marked %v, reading %v now: %v, want ErrClockRollback", ahead, t0, err)
		}
		got, err := mem.Records().Get(ctx, "mk/orders|clock")
		if err != nil || string(got[0].Value) != "1714568400000000" {
			t.Fatalf("the mark in the records: %q, %v; want %d", got[0].Value, err, ahead.UnixMicro())
		}
		// A process started after the upgrade reads the records alone.
		g2 := newGuard(part, mem, "orders", DefaultRetention)
		if err := g2.check(ctx, t0.Unix(), t0, false, "orders|2024"); !errors.Is(err, sequence.ErrClockRollback) {
			t.Fatalf("a second process: %v, want ErrClockRollback", err)
		}
	}
}

// Marks raised at once by many processes end at the largest; none goes
// back. A mark written by hand that is not a number is refused, not
// taken as 0.
func TestGuardMark(t *testing.T) {
	ctx := t.Context()
	mem := sequence.NewMemory()
	part := &Part{Reset: builtin.Second}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var top int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGuard(part, mem, "k", DefaultRetention)
			for i := range 25 {
				v := int64(1_000_000 + w*1000 + i)
				got, err := g.mark(ctx, v)
				if err != nil {
					t.Error(err)
					return
				}
				if got < v {
					t.Errorf("mark(%d) = %d, below what was marked", v, got)
				}
				mu.Lock()
				top = max(top, v)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	g := newGuard(part, mem, "k", DefaultRetention)
	if got, err := g.mark(ctx, 0); err != nil || got != top {
		t.Fatalf("after the marks: %d, %v; want %d", got, err, top)
	}
	rs := mem.Records()
	if _, err := rs.Commit(ctx, nil, []record.Op{record.Put("mk/k|clock", []byte("soon"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.mark(ctx, 5); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("a mark edited to %q: %v, want an error", "soon", err)
	}
}
