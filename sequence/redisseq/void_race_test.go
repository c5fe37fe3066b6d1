package redisseq_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/redisseq"
)

// A void through Redis's journal races the refills of its range: a
// number the ledger reserved for a refill not yet installed in Redis is
// not handed out once its void was accepted. One goroutine takes
// numbers one at a time (the Allocator's ranges of 1, the strict
// Counter); three void numbers just above the last taken. The control
// voids in the ledger directly, past the check of Redis's range, and
// finds voided numbers handed out afterwards.
func TestVoidRacesRefill(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	ledger := pgLedger(t)
	a := must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 20, Prefix: "a:"}))
	c := must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 20, Prefix: "c:"}))
	fromA := func(key string) (int64, error) { r, err := a.Allocate(ctx, key, 1); return r.First, err }
	for _, tt := range []struct {
		name    string
		next    func(key string) (int64, error)
		j       journal.Keeper
		control bool
	}{
		{"Allocator", fromA, journal.Of(a), false},
		{"Counter", func(key string) (int64, error) { return c.Next(ctx, key) }, journal.Of(c), false},
		{"control: the ledger's journal", fromA, journal.Of(ledger), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "k-" + tt.name
			var ticket, last atomic.Int64
			var mu sync.Mutex
			takenAt, voidedAt := map[int64]int64{}, map[int64]int64{}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					at := ticket.Add(1)
					n, err := tt.next(key)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if _, twice := takenAt[n]; twice {
						t.Errorf("%d handed out twice", n)
					}
					takenAt[n] = at
					mu.Unlock()
					last.Store(n)
				}
			})
			for w := range 3 {
				wg.Go(func() {
					rnd := rand.New(rand.NewPCG(uint64(w), 11))
					for {
						select {
						case <-stop:
							return
						default:
						}
						v := last.Load() + 1 + rnd.Int64N(30)
						if _, err := tt.j.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: journal.Range{First: v, Last: v}, Reason: "cancelled"}); err != nil {
							continue
						}
						at := ticket.Add(1)
						mu.Lock()
						if _, ok := voidedAt[v]; !ok {
							voidedAt[v] = at
						}
						mu.Unlock()
					}
				})
			}
			time.Sleep(2 * time.Second)
			close(stop)
			wg.Wait()
			after := 0
			for v, at := range voidedAt {
				if taken, ok := takenAt[v]; ok && taken > at {
					after++
				}
			}
			t.Logf("%d numbers handed out, %d voids accepted, %d voided numbers handed out after their void", len(takenAt), len(voidedAt), after)
			switch {
			case len(takenAt) < 100 || len(voidedAt) == 0:
				t.Errorf("%d handed out and %d voided: too few to tell", len(takenAt), len(voidedAt))
			case tt.control && after == 0:
				t.Error("control: no voided number handed out after its void; the race is not exercised")
			case !tt.control && after > 0:
				t.Errorf("%d voided numbers handed out after their void was accepted", after)
			}
		})
	}
}
