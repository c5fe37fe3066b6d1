package sequencetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/catalog"
)

// RunCatalog checks the promises of a [catalog.Catalog]: an entry is
// recorded once, with the store's time; check sees every entry, and a
// refusal records nothing; entries come oldest first; Forget removes one;
// and of many goroutines enrolling colliding entries at once, exactly one
// wins each round. cat may be a store shared with other runs: the suite's
// entries carry a random run name, and it forgets them when it ends.
func RunCatalog(t *testing.T, cat *catalog.Catalog) {
	ctx := context.Background()
	run := fmt.Sprintf("sequencetest %016x", rand.Uint64())
	mine := func(es []catalog.Entry, group string) []catalog.Entry {
		var out []catalog.Entry
		for _, e := range es {
			if strings.HasPrefix(e.Spec, run+" "+group) {
				out = append(out, e)
			}
		}
		return out
	}
	var ids []string
	t.Cleanup(func() {
		for _, id := range ids {
			cat.Forget(ctx, id)
		}
	})
	id := func(s string) string {
		h := fmt.Sprintf("%x", []byte(run+s))
		if len(h) > 64 {
			h = h[len(h)-64:]
		}
		ids = append(ids, h)
		return h
	}
	accept := func([]catalog.Entry) error { return nil }

	t.Run("Enroll", func(t *testing.T) {
		e := catalog.Entry{ID: id("a"), Name: "a", Spec: run + " a", By: "sequencetest"}
		got, err := cat.Enroll(ctx, e, accept)
		if err != nil {
			t.Fatalf("Enroll: %v", err)
		}
		if got.ID != e.ID || got.Name != e.Name || got.Spec != e.Spec || got.By != e.By || got.First.IsZero() {
			t.Fatalf("Enroll(%+v) = %+v: want it back with First set", e, got)
		}
		again := e
		again.Name, again.Spec = "other", run+" other"
		called := false
		got2, err := cat.Enroll(ctx, again, func([]catalog.Entry) error { called = true; return nil })
		if err != nil {
			t.Fatalf("Enroll again: %v", err)
		}
		if got2.Spec != e.Spec || !got2.First.Equal(got.First) {
			t.Fatalf("Enroll of a recorded ID = %+v: want the first entry %+v", got2, got)
		}
		if called {
			t.Errorf("Enroll of a recorded ID called check")
		}
	})
	t.Run("Many", func(t *testing.T) {
		// More entries than a store's transaction takes conditions
		// (etcd: 128): enrolling, enrolling again and listing go on
		// (found by adversary run 3: etcd refused them all from the
		// 128th entry).
		const n = 130
		spec := "many " + run // not this run's other entries, which the other tests count
		var first string
		for i := range n {
			e := catalog.Entry{ID: id(fmt.Sprintf("many%d", i)), Name: "many", Spec: spec, By: "sequencetest"}
			if i == 0 {
				first = e.ID
			}
			if _, err := cat.Enroll(ctx, e, accept); err != nil {
				t.Fatalf("Enroll of entry %d: %v", i, err)
			}
		}
		if _, err := cat.Enroll(ctx, catalog.Entry{ID: first, Name: "many", Spec: spec}, accept); err != nil {
			t.Fatalf("Enroll again of the first of %d entries: %v", n, err)
		}
		es, err := cat.Entries(ctx)
		if err != nil {
			t.Fatalf("Entries of %d: %v", n, err)
		}
		got := 0
		for _, e := range es {
			if e.Spec == spec {
				got++
			}
		}
		if got != n {
			t.Fatalf("Entries lists %d of the %d enrolled", got, n)
		}
	})
	t.Run("Refuse", func(t *testing.T) {
		no := errors.New("sequencetest: refused")
		var seen []catalog.Entry
		e := catalog.Entry{ID: id("refused"), Spec: run + " refused"}
		_, err := cat.Enroll(ctx, e, func(es []catalog.Entry) error { seen = es; return no })
		if !errors.Is(err, no) {
			t.Fatalf("Enroll with a refusing check: %v, want the check's error", err)
		}
		if len(mine(seen, "a")) != 1 {
			t.Errorf("check saw %d of the entries enrolled before, want 1", len(mine(seen, "a")))
		}
		es, err := cat.Entries(ctx)
		if err != nil {
			t.Fatalf("Entries: %v", err)
		}
		if len(mine(es, "refused")) != 0 {
			t.Errorf("a refused entry was recorded")
		}
	})
	t.Run("Entries", func(t *testing.T) {
		for _, s := range []string{"b", "c"} {
			if _, err := cat.Enroll(ctx, catalog.Entry{ID: id(s), Spec: run + " " + s}, accept); err != nil {
				t.Fatal(err)
			}
		}
		es, err := cat.Entries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(es); i++ {
			if es[i].First.Before(es[i-1].First) {
				t.Fatalf("Entries not oldest first: %v after %v", es[i].First, es[i-1].First)
			}
		}
		if n := len(mine(es, "")); n != 3 {
			t.Errorf("Entries holds %d of this run's 3 entries", n)
		}
	})
	t.Run("Forget", func(t *testing.T) {
		e := catalog.Entry{ID: id("forget"), Spec: run + " forget"}
		if _, err := cat.Enroll(ctx, e, accept); err != nil {
			t.Fatal(err)
		}
		if ok, err := cat.Forget(ctx, e.ID); !ok || err != nil {
			t.Fatalf("Forget = %v, %v; want true, nil", ok, err)
		}
		if ok, err := cat.Forget(ctx, e.ID); ok || err != nil {
			t.Fatalf("Forget again = %v, %v; want false, nil", ok, err)
		}
		es, _ := cat.Entries(ctx)
		if len(mine(es, "forget")) != 0 {
			t.Errorf("a forgotten entry is listed")
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, e := range []catalog.Entry{{}, {ID: strings.Repeat("x", 65)}, {ID: "x", Spec: strings.Repeat("x", catalog.MaxSpec+1)}} {
			if _, err := cat.Enroll(ctx, e, accept); !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Errorf("Enroll of an entry with an ID of %d bytes and a spec of %d: %v, want ErrInvalidArgument", len(e.ID), len(e.Spec), err)
			}
		}
	})
	t.Run("OneWinner", func(t *testing.T) {
		const rounds, racers = 10, 6
		for r := range rounds {
			group := fmt.Sprintf("race %d", r)
			var wg sync.WaitGroup
			wins := make([]bool, racers)
			errs := make([]error, racers)
			refused := errors.New("collides")
			for g := range racers {
				e := catalog.Entry{ID: id(fmt.Sprintf("race %d %d", r, g)), Spec: run + " " + group + fmt.Sprintf(" by %d", g)}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := cat.Enroll(ctx, e, func(es []catalog.Entry) error {
						if len(mine(es, group)) > 0 {
							return refused
						}
						return nil
					})
					wins[g] = err == nil
					if !errors.Is(err, refused) {
						errs[g] = err
					}
				}()
			}
			wg.Wait()
			n := 0
			for g := range racers {
				if errs[g] != nil {
					t.Fatalf("round %d: racer %d: %v", r, g, errs[g])
				}
				if wins[g] {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("round %d: %d of %d colliding enrollments won, want exactly 1", r, n, racers)
			}
			es, _ := cat.Entries(ctx)
			if m := len(mine(es, group)); m != 1 {
				t.Fatalf("round %d: %d colliding entries recorded, want 1", r, m)
			}
		}
	})
}
