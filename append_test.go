package sn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// Append appends what Issue returns, after what the Batch holds; with
// middleware as without; allocating nothing with room.
func TestAppend(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, tmpl := range []string{
		"SN-@<seq, width=8>-@<checksum, algo=luhn>",          // the simple path
		"INV/@<date, format=yyyy>/@<v, var>/@<seq, width=5>", // the general one
	} {
		for _, wrapped := range []bool{false, true} {
			var opts []sn.Option
			if wrapped {
				opts = append(opts, sn.WithMiddleware(pass))
			}
			a := sn.MustNew(tmpl, append(opts, sn.WithSequence("seq", sequence.NewMemory()))...)
			b := sn.MustNew(tmpl, sn.WithSequence("seq", sequence.NewMemory()))
			vars := sn.Vars{"v": "x"}
			want, err := b.Issue(ctx, sn.Request{N: 50, At: at, Vars: vars})
			if err != nil {
				t.Fatal(err)
			}
			var bt sn.Batch
			if err := a.Append(ctx, &bt, sn.Request{N: 1, Vars: vars, At: at}); err != nil {
				t.Fatal(err)
			}
			if err := a.Append(ctx, &bt, sn.Request{N: 50, At: at, Vars: vars}); err != nil {
				t.Fatal(err)
			}
			got := bt.Strings()
			if len(got) != 51 || !cmp.Equal(got[:50], want) {
				t.Errorf("%s (middleware %v): %q, want %q", tmpl, wrapped, got, want)
			}
		}
	}

	g := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", sequence.NewMemory()))
	var bt sn.Batch
	for _, n := range []int{sn.MaxN + 1, -1} {
		if err := g.Append(ctx, &bt, sn.Request{N: n}); !errors.Is(err, sn.ErrTooMany) || bt.Len() != 0 {
			t.Errorf("N %d: %v, %d numbers", n, err, bt.Len())
		}
	}

	// A width that overflows partway: the numbers before it are kept.
	tiny := sn.MustNew("T@<seq, width=1>", sn.WithSequence("seq", sequence.NewMemory()))
	err := tiny.Append(ctx, &bt, sn.Request{N: 12})
	if got := strings.Join(bt.Strings(), ""); !errors.Is(err, sn.ErrOverflow) || bt.Len() != 9 || got != "T1T2T3T4T5T6T7T8T9" {
		t.Errorf("overflow partway: %q %v", got, err)
	}
	bt.Reset()
	if bt.Len() != 0 || bt.Strings() != nil {
		t.Errorf("Reset leaves %d numbers", bt.Len())
	}
}

// AppendJSON appends what Append appends, as a JSON list without its
// brackets, after what dst holds: for one number and many, with
// middleware and an idempotency key as without; at an error, the numbers
// issued before it stay, and a refused request appends nothing.
func TestAppendJSON(t *testing.T) {
	ctx := context.Background()
	read := func(t *testing.T, js []byte) []string {
		t.Helper()
		var out []string
		if err := json.Unmarshal([]byte("["+string(js)+"]"), &out); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return out
	}
	for _, tmpl := range []string{
		"SN-@<seq, width=8>-@<checksum, algo=luhn>", // framed as it is rendered
		"SN-@<seq, width=8>/@<checksum, algo=mod11-2>",
		`Q"@<seq>\\`, // text JSON escapes
	} {
		for _, wrapped := range []bool{false, true} {
			var opts []sn.Option
			if wrapped {
				opts = append(opts, sn.WithMiddleware(pass))
			}
			a := sn.MustNew(tmpl, append(opts, sn.WithSequence("seq", sequence.NewMemory()))...)
			b := sn.MustNew(tmpl, sn.WithSequence("seq", sequence.NewMemory()))
			var bt sn.Batch
			js := []byte(`"before"`)
			for _, r := range []sn.Request{{}, {N: 1}, {N: 25}, {N: 2, IdempotencyKey: "k1"}, {N: 2, IdempotencyKey: "k1"}} {
				var n int
				var err error
				if js, n, err = a.AppendJSON(ctx, append(js, ','), r); err != nil {
					t.Fatal(err)
				}
				from := bt.Len()
				if err := b.Append(ctx, &bt, r); err != nil || n != bt.Len()-from {
					t.Fatalf("%s: %d numbers, Append %d (%v)", tmpl, n, bt.Len()-from, err)
				}
			}
			want := append([]string{"before"}, bt.Strings()...)
			if got := read(t, js); !cmp.Equal(got, want) {
				t.Errorf("%s (middleware %v): %q, want %q", tmpl, wrapped, got, want)
			}
		}
	}

	tiny := sn.MustNew("T@<seq, width=1>", sn.WithSequence("seq", sequence.NewMemory()))
	js, n, err := tiny.AppendJSON(ctx, nil, sn.Request{N: 12})
	if got := read(t, js); !errors.Is(err, sn.ErrOverflow) || n != 9 || len(got) != 9 || got[8] != "T9" {
		t.Errorf("overflow partway: %q, %d, %v", got, n, err)
	}
	for _, r := range []sn.Request{{N: sn.MaxN + 1}, {N: -1}, {Vars: sn.Vars{"x": "1"}}} {
		if js, n, err := tiny.AppendJSON(ctx, []byte("kept"), r); err == nil || n != 0 || string(js) != "kept" {
			t.Errorf("%+v: %q, %d, %v", r, js, n, err)
		}
	}
}

// pass is a middleware that does nothing.
var pass sn.Middleware = func(_ *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) { return next, nil }

// Next allocates its string; Append and AppendJSON allocate nothing with
// room, for one number and for a batch; with a middleware as without.
func TestAllocations(t *testing.T) {
	ctx := context.Background()
	for _, wrapped := range []bool{false, true} {
		opts := []sn.Option{sn.WithSequence("seq", sequence.NewMemory())}
		if wrapped {
			opts = append(opts, sn.WithMiddleware(pass, counting(new(int64))))
		}
		g := sn.MustNew("SN-@<seq, width=8>-@<checksum, algo=luhn>", opts...)
		var bt sn.Batch
		var js []byte
		pins := []struct {
			name string
			want float64
			f    func()
		}{
			{"Next", 1, func() { g.Next(ctx) }},
			{"Append of 1", 0, func() { bt.Reset(); g.Append(ctx, &bt, sn.Request{}) }},
			{"Append of 1000", 0, func() { bt.Reset(); g.Append(ctx, &bt, sn.Request{N: 1000}) }},
			{"Issue of 1000", 2, func() { g.Issue(ctx, sn.Request{N: 1000}) }},
			{"AppendJSON of 1", 0, func() { js, _, _ = g.AppendJSON(ctx, js[:0], sn.Request{}) }},
			{"AppendJSON of 1000", 0, func() { js, _, _ = g.AppendJSON(ctx, js[:0], sn.Request{N: 1000}) }},
		}
		for _, p := range pins {
			p.f() // room in the Batch and the pools
			if allocs := testing.AllocsPerRun(200, p.f); allocs != p.want {
				t.Errorf("%s (middleware %v): %v allocations, want %v", p.name, wrapped, allocs, p.want)
			}
		}
	}
}

// On random templates, Append and AppendJSON print what Issue prints,
// batch by batch
// (overflows partway included), no number repeats, every number is one
// the template's Regexp matches, and the strings Issue returned never
// change as later batches are issued.
func TestAppendRandomTemplates(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(7, 11))
	parts := []func() string{
		func() string { return []string{"SN-", "-", "/", "X", "."}[rnd.IntN(5)] },
		func() string { return fmt.Sprintf("@<seq, width=%d>", 1+rnd.IntN(4)) },
		func() string { return fmt.Sprintf("@<seq, width=%d, overflow=grow>", 1+rnd.IntN(3)) },
		func() string { return "@<date, format=yyyyMMdd>" },
		func() string { return "@<v, var>" },
		func() string { return "@<checksum, algo=luhn>" },
		func() string { return "@<s2, width=2, reset=day>" },
		func() string { return `"&\\` }, // text JSON escapes
	}
	days := []time.Time{time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), time.Date(2024, 5, 2, 23, 59, 59, 0, time.UTC)}
	type kept struct{ got, copy string }
	var keep []kept
	compiled, numbers, partial := 0, 0, 0
	for range 800 {
		var b strings.Builder
		for range 1 + rnd.IntN(6) {
			b.WriteString(parts[rnd.IntN(len(parts))]())
		}
		tmpl := b.String()
		gen := func() (*sn.Generator, error) {
			return sn.New(tmpl, sn.WithSequence("seq", sequence.NewMemory()), sn.WithSequence("s2", sequence.NewMemory()))
		}
		a, err := gen()
		if err != nil {
			continue // no sequence part, reset= without its date, ambiguous...
		}
		bg, _ := gen()
		cg, _ := gen()
		var js []byte
		compiled++
		re := regexp.MustCompile(a.Regexp())
		seen := map[string]bool{}
		var bt sn.Batch
		for range 12 {
			n, at, vars := rnd.IntN(60), days[rnd.IntN(2)], sn.Vars{"v": []string{"a", "zz", "é<"}[rnd.IntN(3)]}
			from := bt.Len()
			errA := a.Append(ctx, &bt, sn.Request{N: n, At: at, Vars: vars})
			want, errB := bg.Issue(ctx, sn.Request{N: n, At: at, Vars: vars})
			if (errA == nil) != (errB == nil) || bt.Len()-from != len(want) {
				t.Fatalf("%s, n=%d: Append gave %d and %v, Issue %d and %v", tmpl, n, bt.Len()-from, errA, len(want), errB)
			}
			var k int
			var errC error
			js, k, errC = cg.AppendJSON(ctx, append(js[:0], '['), sn.Request{N: n, At: at, Vars: vars})
			var fromJSON []string
			if err := json.Unmarshal(append(js, ']'), &fromJSON); err != nil || (errC == nil) != (errB == nil) || k != len(want) || !cmp.Equal(fromJSON, want, cmpopts.EquateEmpty()) {
				t.Fatalf("%s, n=%d: AppendJSON gave %d, %v and %s (%v); Issue %q", tmpl, n, k, errC, js, err, want)
			}
			if errA != nil {
				if !errors.Is(errA, sn.ErrOverflow) {
					t.Fatalf("%s: %v", tmpl, errA)
				}
				partial++
			}
			for i := range want {
				got := string(bt.Bytes(from + i))
				if got != want[i] || seen[got] || !re.MatchString(got) {
					t.Fatalf("%s, n=%d, number %d: %q; Issue %q; seen before %v; matches %s: %v", tmpl, n, i, got, want[i], seen[got], a.Regexp(), re.MatchString(got))
				}
				seen[got] = true
				keep = append(keep, kept{want[i], strings.Clone(want[i])})
			}
			numbers += len(want)
		}
	}
	for _, k := range keep {
		if k.got != k.copy {
			t.Fatalf("a string Issue returned changed from %q to %q", k.copy, k.got)
		}
	}
	if compiled < 200 || partial == 0 {
		t.Fatalf("%d templates compiled, %d batches overflowed partway: the test no longer tries what it means to", compiled, partial)
	}
	t.Logf("%d templates, %d numbers, %d batches overflowed partway: Append, AppendJSON and Issue agree, 0 repeats", compiled, numbers, partial)
}
