package claim

import (
	"testing"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// The sweep deletes a settled claim once its keep has passed, and one
// never settled only claimLinger after its lease, so that a late Settle
// still finds it; what is not due stays.
func TestClaimsSweep(t *testing.T) {
	ctx := t.Context()
	s := record.NewMemory()
	c := claims{s}
	for _, id := range []string{"settled", "pending", "kept"} {
		if _, err := c.Claim(ctx, id, "d", "tok", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Settle(ctx, "settled", "tok", "a", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(ctx, "kept", "tok", "a", 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	left := func(at time.Time) []string {
		c.sweep(ctx, at)
		var ids []string
		for _, id := range []string{"settled", "pending", "kept"} {
			rs, _ := s.Get(ctx, claimKey(id))
			if rs[0].Exists() {
				ids = append(ids, id)
			}
		}
		return ids
	}
	now := time.Now()
	if got := left(now.Add(time.Hour)); len(got) != 2 || got[0] != "pending" || got[1] != "kept" {
		t.Fatalf("an hour on: %v; want pending and kept", got)
	}
	if err := c.Settle(ctx, "pending", "tok", "late", time.Hour); err != nil {
		t.Fatalf("a late Settle of a claim nobody took over: %v", err)
	}
	if got := left(now.Add(3 * time.Hour)); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("three hours on: %v; want kept alone", got)
	}
	if got := left(now.Add(49 * time.Hour)); len(got) != 0 {
		t.Fatalf("49 hours on: %v; want none", got)
	}
	if rs, _ := s.Scan(ctx, "ix/", "iy", 0); len(rs) != 0 {
		t.Fatalf("the sweep's index keeps %d entries of claims gone", len(rs))
	}
}
