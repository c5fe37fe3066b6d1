package sequencetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/journal"
)

// VoidsAhead draws numbers of key with next on one goroutine while three
// others void, through j, numbers just above the last drawn, for d, and
// longer (up to 30 d) until 100 numbers are drawn and a void is accepted:
// a busy machine draws fewer in d. It
// returns how many numbers were drawn, how many voids were accepted,
// and how many numbers were voided and then drawn by a call that began
// after the void was accepted: a void that did not hold. Every event
// takes a ticket, in order. A number drawn twice fails t.
//
// A layer that holds numbers it drew (a Segment's blocks, a Queued's
// queue, a Redis range) must refuse a void of those, and of those it is
// drawing, for afterVoid to stay 0; voiding through the store's own
// journal, beneath the layer, is the control that finds some.
func VoidsAhead(t *testing.T, next func(ctx context.Context) (int64, error), j journal.Keeper, key string, d time.Duration) (issued, voided, afterVoid int) {
	t.Helper()
	ctx := context.Background()
	var ticket, last atomic.Int64
	var mu sync.Mutex
	drawnAt, voidedAt := map[int64]int64{}, map[int64]int64{}
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
			n, err := next(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			if _, twice := drawnAt[n]; twice {
				t.Errorf("%d issued twice", n)
			}
			drawnAt[n] = at
			mu.Unlock()
			last.Store(n)
		}
	})
	for w := range 3 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := last.Load() + 1 + rnd.Int64N(30)
				if _, err := j.Note(ctx, key, journal.Event{Kind: journal.Voided, Range: journal.Range{First: v, Last: v}, Reason: "cancelled"}); err != nil {
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
	// At least d, and on a busy machine on until 100 numbers are drawn and
	// a void is accepted, so that the count can tell (up to 30 d).
	time.Sleep(d)
	for end := time.Now().Add(29 * d); time.Now().Before(end); time.Sleep(d / 20) {
		mu.Lock()
		enough := len(drawnAt) >= 100 && len(voidedAt) > 0
		mu.Unlock()
		if enough {
			break
		}
	}
	close(stop)
	wg.Wait()
	for v, at := range voidedAt {
		if drawn, ok := drawnAt[v]; ok && drawn > at {
			afterVoid++
		}
	}
	return len(drawnAt), len(voidedAt), afterVoid
}
