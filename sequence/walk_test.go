package sequence_test

import (
	"context"
	"slices"
	"testing"

	"github.com/sngen/sn/sequence"
)

// Walk finds the Segments under a Queued over a Balanced; a Segment lists
// its keys and counts the time spent fetching.
func TestWalk(t *testing.T) {
	ctx := context.Background()
	a := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	b := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
	defer a.Close()
	defer b.Close()
	bal, err := sequence.NewBalanced([]sequence.Gen{a, b}, sequence.BalancedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sequence.NewQueued(bal, sequence.QueuedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var found []sequence.Gen
	sequence.Walk(q, func(g sequence.Gen) { found = append(found, g) })
	want := []sequence.Gen{q, bal, a, b}
	if len(found) != len(want) {
		t.Fatalf("Walk found %d Gens, want %d", len(found), len(want))
	}
	for i := range want {
		if found[i] != want[i] {
			t.Errorf("Walk's Gen %d is %T, want %T", i, found[i], want[i])
		}
	}
	sequence.Walk(nil, func(sequence.Gen) { t.Error("Walk(nil) called fn") })

	for _, k := range []string{"b", "a", "c"} {
		if _, err := a.Next(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Keys(0); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Keys = %q", got)
	}
	if got := a.Keys(2); len(got) != 2 || !slices.IsSorted(got) {
		t.Errorf("Keys = %q", got)
	}
	if st := a.Stats(); st.Fetches == 0 || st.FetchTime <= 0 || st.LastStep == 0 {
		t.Errorf("Stats = %+v: no fetch time counted", st)
	}
}
