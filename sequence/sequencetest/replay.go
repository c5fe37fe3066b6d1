package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
)

// RunReplayer checks the promises of a [claim.Replayer]: a key is
// claimed once, by one of many callers at once; its holder may claim it
// again; others see it under way, then its answer and the digest it was
// first used with; a claim past its lease is taken over, and its first
// holder's Settle is refused; an answer past its keep is forgotten. r may
// be a store shared with other runs: the suite's keys are its own.
func RunReplayer(t *testing.T, r claim.Replayer) {
	ctx := context.Background()
	run := fmt.Sprintf("sequencetest %016x ", rand.Uint64())
	t.Run("Claim", func(t *testing.T) {
		id := run + "claim"
		c, err := r.Claim(ctx, id, "d1", "t1", time.Minute)
		if err != nil || !c.Mine || c.Digest != "d1" || c.Answer != "" {
			t.Fatalf("the first Claim: %+v %v, want it mine", c, err)
		}
		if c, err := r.Claim(ctx, id, "d1", "t1", time.Minute); err != nil || !c.Mine {
			t.Errorf("the holder claims again: %+v %v, want it mine", c, err)
		}
		if c, err := r.Claim(ctx, id, "d2", "t2", time.Minute); err != nil || c.Mine || c.Answer != "" || c.Digest != "d1" {
			t.Errorf("another claims it under way: %+v %v, want not mine, no answer, digest d1", c, err)
		}
		if err := r.Settle(ctx, id, "t2", "wrong", time.Minute); !errors.Is(err, claim.ErrLost) {
			t.Errorf("Settle by another token: %v, want claim.ErrLost", err)
		}
		if err := r.Settle(ctx, id, "t1", "A-1\nA-2", time.Minute); err != nil {
			t.Fatal(err)
		}
		if c, err := r.Claim(ctx, id, "d3", "t3", time.Minute); err != nil || c.Mine || c.Answer != "A-1\nA-2" || c.Digest != "d1" {
			t.Errorf("a Claim after Settle: %+v %v, want the answer and digest d1", c, err)
		}
		if err := r.Settle(ctx, id, "t1", "again", time.Minute); !errors.Is(err, claim.ErrLost) {
			t.Errorf("a second Settle: %v, want claim.ErrLost", err)
		}
	})
	t.Run("Lapse", func(t *testing.T) {
		id := run + "lapse"
		if c, err := r.Claim(ctx, id, "d1", "t1", 20*time.Millisecond); err != nil || !c.Mine {
			t.Fatalf("Claim: %+v %v", c, err)
		}
		time.Sleep(40 * time.Millisecond)
		if c, err := r.Claim(ctx, id, "d1", "t2", time.Minute); err != nil || !c.Mine {
			t.Fatalf("a Claim past the lease: %+v %v, want it taken over", c, err)
		}
		if err := r.Settle(ctx, id, "t1", "late", time.Minute); !errors.Is(err, claim.ErrLost) {
			t.Errorf("the first holder's late Settle: %v, want claim.ErrLost", err)
		}
		if err := r.Settle(ctx, id, "t2", "B", 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
		if c, err := r.Claim(ctx, id, "d9", "t3", time.Minute); err != nil || !c.Mine || c.Answer != "" {
			t.Errorf("a Claim past the answer's keep: %+v %v, want it new and mine", c, err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		for round := range 5 {
			id := fmt.Sprintf("%sconcurrent %d", run, round)
			var mine atomic.Int32
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					c, err := r.Claim(ctx, id, "d", fmt.Sprintf("t%d", w), time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if c.Mine {
						mine.Add(1)
					}
				})
			}
			wg.Wait()
			if n := mine.Load(); n != 1 {
				t.Errorf("round %d: %d of 8 concurrent claims mine, want 1", round, n)
			}
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		if _, err := r.Claim(ctx, "", "d", "t", time.Minute); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("an empty key: %v", err)
		}
	})
}
