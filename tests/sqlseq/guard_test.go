package sqlseq_test

import (
	"github.com/sngen/sn/internal/guardtest"

	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqlseq"
)

// The retention guard over a database: counters per second expire by
// its clock (guardtest.Run).
func TestClockGuard(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel() // a database of its own on each server: the two side by side
			guardtest.Run(t, func(t *testing.T) guardtest.Store {
				return newStore(t, b, b.open(t), sqlseq.Options{})
			})
		})
	}
}

// repeatCounter counts strings seen twice.
type repeatCounter struct {
	seen    map[string]bool
	repeats int
}

func (r *repeatCounter) add(s string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[s] {
		r.repeats++
	}
	r.seen[s] = true
}

// noRecords hides a Segment's records: the control of
// TestBalancedOrder.
type noRecords struct{ s *sequence.Segment }

func (n noRecords) Next(ctx context.Context, key string) (int64, error) { return n.s.Next(ctx, key) }

// Two processes put a Balanced over the same two databases (PostgreSQL and
// MariaDB) in another order. The first records each store's place; the
// second is refused before its first number (ErrInvalidArgument, naming
// both places) while the first goes on, so nothing repeats. The control, the same without
// records, repeats.
func TestBalancedOrder(t *testing.T) {
	pg, my := backends()[0], backends()[1]
	for _, recorded := range []bool{true, false} {
		t.Run(map[bool]string{true: "recorded", false: "control"}[recorded], func(t *testing.T) {
			ctx := context.Background()
			stores := []*sqlseq.Store{newStore(t, pg, pg.open(t), sqlseq.Options{}), newStore(t, my, my.open(t), sqlseq.Options{})}
			process := func(order ...int) *sequence.Balanced {
				var gens []sequence.Gen
				for _, i := range order {
					seg := must(sequence.NewSegment(stores[i], sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10}))
					t.Cleanup(func() { seg.Close() })
					if recorded {
						gens = append(gens, seg)
					} else {
						gens = append(gens, noRecords{seg})
					}
				}
				b, err := sequence.NewBalanced(gens, sequence.BalancedOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			var count repeatCounter
			a := process(0, 1)
			for range 100 {
				n, err := a.Next(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				count.add(strconv.FormatInt(n, 10))
			}
			b := process(1, 0)
			refused := 0
			for range 100 { // both issue, in turn
				n, err := a.Next(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				count.add(strconv.FormatInt(n, 10))
				n, err = b.Next(ctx, "k")
				if errors.Is(err, sequence.ErrInvalidArgument) {
					refused++
					if refused == 1 {
						t.Log(err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				count.add(strconv.FormatInt(n, 10))
			}
			switch {
			case recorded && (count.repeats != 0 || refused != 100):
				t.Errorf("the Balanced in another order: %d repeats, %d of 100 calls refused", count.repeats, refused)
			case !recorded && count.repeats == 0:
				t.Error("the control repeated nothing: the test cannot see Gens in another order")
			}
			// The first process goes on.
			if _, err := a.Next(ctx, "k"); err != nil {
				t.Errorf("the first Balanced after the second was refused: %v", err)
			}
		})
	}
}
