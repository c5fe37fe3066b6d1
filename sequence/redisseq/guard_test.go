package redisseq_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// hideMarks hides a Segment's Marker: sn then neither guards nor expires
// its counters. The control of TestClockGuardMachines.
type hideMarks struct{ s *sequence.Segment }

func (h hideMarks) Next(ctx context.Context, key string) (int64, error) { return h.s.Next(ctx, key) }

// machineClock is a machine's wall clock: the test moves it.
type machineClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *machineClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Duration(rand.IntN(30)) * time.Millisecond) // time passes between calls
	return c.t
}

func (c *machineClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// Four machines (each its own Generator, Segment and Allocator) issue
// per-second numbers from one Redis over one PostgreSQL ledger. Their
// clocks run, jump three hours ahead, and the counters of the first hour
// are expired in Redis and in the ledger, as their TTLs would three hours
// later. Then one machine's clock is set back to the first hour, and a
// restarted machine starts with a clock there: both are refused with
// sequence.ErrClockRollback, while the others go on. Every number is
// counted: none repeats. The control, the same run without the guard,
// repeats.
func TestClockGuardMachines(t *testing.T) {
	rdb := redistest.StartServer(t).Client(t)
	for _, guarded := range []bool{true, false} {
		name := map[bool]string{true: "guarded", false: "control: no guard"}[guarded]
		t.Run(name, func(t *testing.T) {
			ledger := pgLedger(t)
			ctx := context.Background()
			prefix := map[bool]string{true: "g:", false: "c:"}[guarded]
			const tpl = `@<date, format=yyyyMMddHHmmss>-@<seq, width=6, reset=second>`
			t0 := time.Now().Truncate(time.Hour)
			type machine struct {
				g     *sn.Generator
				alloc *redisseq.Allocator
				clock *machineClock
			}
			newMachine := func(at time.Time) *machine {
				a := redisseq.NewAllocator(rdb, ledger, &redisseq.AllocatorOptions{Prefix: prefix, Chunk: 20})
				var gen sequence.Gen = sequence.NewSegment(a, sequence.SegmentOptions{Step: 5, MinStep: 5, MaxStep: 5})
				if !guarded {
					gen = hideMarks{gen.(*sequence.Segment)}
				}
				m := &machine{alloc: a, clock: &machineClock{t: at}}
				g, err := sn.New(tpl, sn.WithSequence("seq", gen), sn.WithClock(m.clock.now))
				if err != nil {
					t.Fatal(err)
				}
				m.g = g
				return m
			}
			var machines []*machine
			for range 4 {
				machines = append(machines, newMachine(t0))
			}
			seen := map[string]int{}
			keys := map[string]bool{}
			issued, refused, repeats, regressed := 0, 0, 0, 0
			run := func(ms []*machine, rounds int) {
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i, m := range ms {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range rounds {
							s, err := m.g.Next(ctx)
							mu.Lock()
							switch {
							case errors.Is(err, sequence.ErrClockRollback):
								refused++
							case !guarded && errors.Is(err, sequence.ErrRegressed):
								regressed++ // a Segment that still holds the key's block sees the store went back
							case err != nil:
								mu.Unlock()
								t.Errorf("machine %d: %v", i, err)
								return
							default:
								issued++
								if _, ok := seen[s]; ok {
									repeats++
								}
								seen[s] = i
								if p, err := m.g.Parse(s); err == nil {
									keys[p.Key] = true
								}
							}
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
			}
			run(machines, 400) // the first hour
			firstHour := keys
			keys = map[string]bool{}
			for _, m := range machines {
				m.clock.set(t0.Add(3 * time.Hour))
			}
			run(machines, 200)
			// Three hours on, the first hour's counters are gone from the store.
			for k := range firstHour {
				if err := machines[0].alloc.Expire(ctx, k, 0); err != nil {
					t.Fatal(err)
				}
			}
			machines[0].clock.set(t0)             // an NTP step back of three hours
			restarted := newMachine(t0)           // a machine restarted with its clock there
			run(append(machines, restarted), 300) // the others go on
			t.Logf("%d numbers, %d refused, %d refused as gone backwards, %d repeats, %d counters of the first hour expired", issued, refused, regressed, repeats, len(firstHour))
			switch {
			case guarded && repeats != 0:
				t.Errorf("%d repeats", repeats)
			case guarded && refused != 600:
				t.Errorf("%d calls refused, want the 600 of the two machines in the expired hour", refused)
			case !guarded && repeats == 0:
				t.Errorf("the control repeated nothing: the test cannot see a restarted counter")
			}
		})
	}
}
