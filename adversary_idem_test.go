package sn_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
)

// ambiguousSettle is a MemoryAllocator whose Settle records the answer and
// then reports a failure, as a store does when the commit went through and
// its acknowledgement was lost (a cut connection, a deadline that fired
// during COMMIT, an etcd Txn that timed out after it applied).
type ambiguousSettle struct {
	*sequence.MemoryAllocator
	once bool
}

func (a *ambiguousSettle) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (claim.Claim, error) {
	return claim.Of(a.MemoryAllocator).Claim(ctx, id, digest, token, lease)
}

func (a *ambiguousSettle) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	err := claim.Of(a.MemoryAllocator).Settle(ctx, id, token, answer, keep)
	if err == nil && !a.once {
		a.once = true
		return errors.New("read tcp 10.0.0.1:5432: connection reset by peer")
	}
	return err
}

// TestAdvAmbiguousSettle: the call whose Settle failed voids its numbers
// and fails; the client retries with the same key and is given those
// numbers, which it prints, and which the journal says are void.
func TestAdvAmbiguousSettle(t *testing.T) {
	ctx := context.Background()
	alloc := &ambiguousSettle{MemoryAllocator: sequence.NewMemoryAllocator()}
	seg, err := sequence.NewSegment(alloc, sequence.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	g, err := sn.New("INV-@<seq, width=6>", sn.WithSequence("seq", seg))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-1"})
	t.Logf("first call: %v", err)
	nums, err := g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-1"})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	t.Logf("retry got %v", nums)
	key, _ := g.Key(sn.Request{})
	events, head, _ := journal.ReadJournal(ctx, journal.Of(alloc), key)
	rep := journal.Audit(key, events, head, time.Now())
	for _, sp := range rep.Spans {
		t.Logf("%v %s: %s", sp.Range, sp.State, sp.Cause())
	}
	for _, n := range nums {
		p, _ := g.Parse(n)
		for _, sp := range rep.Within(p.Draws[0].Seq, p.Draws[0].Seq) {
			if sp.State == journal.Void && slices.Contains(nums, n) {
				t.Errorf("%s was delivered to the client by the retry, and the journal says it is void", n)
			}
		}
	}
}
