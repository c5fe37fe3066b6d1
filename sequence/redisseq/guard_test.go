package redisseq_test

import (
	"github.com/sngen/sn/internal/guardtest"

	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// hideClock hides a Segment's records and Expirer: sn then neither
// guards nor expires its counters. The control of TestClockGuardMachines
// expires them itself, as the guard and the store would.
type hideClock struct{ s *sequence.Segment }

func (h hideClock) Next(ctx context.Context, key string) (int64, error) { return h.s.Next(ctx, key) }

// Four machines (each its own plan, Segment and Allocator) issue
// per-second numbers from one Redis, over a PostgreSQL ledger and alone,
// with a retention of four seconds. They draw for a second, then nothing is
// drawn for longer than two periods and the retention, so the store
// (the ledger's clock, or Redis's TIME) expires that second's counter.
// Then one machine's clock is set back into that second, a machine
// restarted with its clock there, and a document instant there is given:
// all are refused, while the others go on at the present. Every number is
// counted: none repeats. The control, the same run without the guard
// (the counters expire as the guard would have them), repeats.
func TestClockGuardMachines(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	const retention = 4 * time.Second
	const tpl = `@<date, format=yyyyMMddHHmmss>-@<seq, width=6, reset=second>`
	for _, store := range []string{"ledger", "redis only"} {
		for _, guarded := range []bool{true, false} {
			name := store + map[bool]string{true: "", false: "/control"}[guarded]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				prefix := map[bool]string{true: "g:", false: "c:"}[guarded] + store + ":"
				var ledger sequence.Allocator
				if store == "ledger" {
					ledger = pgLedger(t)
				}
				type machine struct {
					pl    *engine.Plan
					alloc *redisseq.Allocator
					mu    sync.Mutex
					clock time.Time // zero: the real clock
				}
				newMachine := func(clock time.Time) *machine {
					var a *redisseq.Allocator
					if ledger != nil {
						a = must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Prefix: prefix, Chunk: 20}))
					} else {
						a = must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{Prefix: prefix}))
					}
					seg := must(sequence.NewSegment(a, sequence.SegmentOptions{Step: 5, MinStep: 5, MaxStep: 5}))
					t.Cleanup(func() { seg.Close() })
					var gen sequence.Gen = seg
					if !guarded {
						gen = hideClock{seg}
					}
					m := &machine{alloc: a, clock: clock}
					now := func() time.Time {
						m.mu.Lock()
						defer m.mu.Unlock()
						if m.clock.IsZero() {
							return time.Now()
						}
						return m.clock
					}
					pl, err := engine.Compile(tpl, engine.Config{
						Seqs:      map[string]sequence.Gen{"seq": gen},
						Exprs:     map[string]expression.Factory{"date": builtin.NewDate},
						Clock:     now,
						Retention: retention,
					})
					if err != nil {
						t.Fatal(err)
					}
					m.pl = pl
					return m
				}
				var machines []*machine
				for range 4 {
					machines = append(machines, newMachine(time.Time{}))
				}
				var mu sync.Mutex
				seen := map[string]bool{}
				keys := map[string]time.Time{}
				issued, refused, repeats := 0, 0, 0
				run := func(ms []*machine, rounds int, at time.Time) {
					var wg sync.WaitGroup
					for i, m := range ms {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range rounds {
								s, err := m.pl.Next(ctx, at, nil)
								mu.Lock()
								switch {
								case errors.Is(err, sequence.ErrClockRollback), errors.Is(err, engine.ErrInstant):
									refused++
								case !guarded && errors.Is(err, sequence.ErrRegressed):
									// a Segment that held the key's block sees the store went back
								case err != nil:
									mu.Unlock()
									t.Errorf("machine %d: %v", i, err)
									return
								default:
									issued++
									if seen[s] {
										repeats++
									}
									seen[s] = true
									if p, err := m.pl.Parse(s); err == nil {
										if _, ok := keys[p.Key]; !ok {
											keys[p.Key] = time.Now()
										}
									}
								}
								mu.Unlock()
							}
						}()
					}
					wg.Wait()
				}
				s0 := time.Now()
				run(machines, 50, s0) // one second's numbers
				if !guarded {
					for k := range keys { // the expiry the guard would give them
						if err := machines[0].alloc.Expire(ctx, k, 2*time.Second+retention); err != nil {
							t.Fatal(err)
						}
					}
				}
				time.Sleep(2*time.Second + retention + time.Second) // idle
				if err := machines[0].alloc.Expire(ctx, "another series", time.Hour); err != nil {
					t.Fatal(err) // any series's Expire sweeps a ledger
				}
				if !guarded {
					for k := range keys {
						guardtest.Forget(t, machines[0].alloc.Records(), k)
					}
				}
				machines[0].mu.Lock()
				machines[0].clock = s0 // an NTP step back into the expired second
				machines[0].mu.Unlock()
				restarted := newMachine(s0) // a machine restarted with its clock there
				run(append(machines, restarted), 50, time.Time{})
				run(machines[1:2], 5, s0) // a document instant there
				t.Logf("%d numbers, %d refused, %d repeats", issued, refused, repeats)
				switch {
				case guarded && repeats != 0:
					t.Errorf("%d repeats", repeats)
				case guarded && refused != 105:
					t.Errorf("%d calls refused, want the 105 of the expired second", refused)
				case !guarded && repeats == 0:
					t.Errorf("the control repeated nothing: the test cannot see a restarted counter")
				}
			})
		}
	}
}

// The retention guard over Redis alone: counters per second expire by
// Redis's clock (guardtest.Run).
func TestClockGuard(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	var n atomic.Int64
	guardtest.Run(t, func(t *testing.T) guardtest.Store {
		return must(redisseq.NewRedisOnlyAllocator(srv.Client(t), redisseq.AllocatorOptions{Prefix: fmt.Sprintf("guard%d:", n.Add(1))}))
	})
}
