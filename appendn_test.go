package sn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// AppendNextN appends what NextNAt returns, after what dst holds, with
// each number's end; with hooks as without; allocating nothing with room.
func TestAppendNextN(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, tmpl := range []string{
		"SN-@<seq, width=8>-@<checksum, algo=luhn>",          // the simple path
		"INV/@<date, format=yyyy>/@<v, var>/@<seq, width=5>", // the general one
	} {
		for _, hooked := range []bool{false, true} {
			var opts []sn.Option
			if hooked {
				opts = append(opts, sn.WithHooks(sn.Hooks{After: func(context.Context, *sn.Call) {}}))
			}
			a := sn.MustNew(tmpl, append(opts, sn.WithSequence("seq", sequence.NewMemory()))...)
			b := sn.MustNew(tmpl, sn.WithSequence("seq", sequence.NewMemory()))
			vars := sn.Vars{"v": "x"}
			want, err := b.NextNAt(ctx, 50, at, vars)
			if err != nil {
				t.Fatal(err)
			}
			dst, ends, err := a.AppendNextN(ctx, []byte("prefix:"), []int{7}, 50, at, vars)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := 1; i < len(ends); i++ {
				got = append(got, string(dst[ends[i-1]:ends[i]]))
			}
			if string(dst[:7]) != "prefix:" || !cmp.Equal(got, want) {
				t.Errorf("%s (hooks %v): %q, want %q", tmpl, hooked, got, want)
			}
		}
	}

	g := sn.MustNew("SN-@<seq, width=8>", sn.WithSequence("seq", sequence.NewMemory()))
	if _, _, err := g.AppendNextN(ctx, nil, nil, sn.MaxN+1, time.Time{}, nil); !errors.Is(err, sn.ErrTooMany) {
		t.Errorf("MaxN+1: %v", err)
	}
	dst, ends := make([]byte, 0, 64*1000), make([]int, 0, 1000)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := g.AppendNextN(ctx, dst[:0], ends[:0], 1000, time.Time{}, nil); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("AppendNextN of 1000 with room allocates %v times, want 0", allocs)
	}

	// A width that overflows partway: the numbers before it are kept.
	tiny := sn.MustNew("T@<seq, width=1>", sn.WithSequence("seq", sequence.NewMemory()))
	dst, ends, err := tiny.AppendNextN(ctx, nil, nil, 12, time.Time{}, nil)
	if !errors.Is(err, sn.ErrOverflow) || len(ends) != 9 || string(dst) != "T1T2T3T4T5T6T7T8T9" {
		t.Errorf("overflow partway: %q %v %v", dst, ends, err)
	}
}

// On random templates, AppendNextN prints what NextNAt prints, batch by
// batch (overflows partway included), no number repeats, every number is
// one the template's Regexp matches, and the strings NextNAt returned
// never change as later batches are issued.
func TestAppendNextNRandomTemplates(t *testing.T) {
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
		compiled++
		re := regexp.MustCompile(a.Regexp())
		seen := map[string]bool{}
		dst, ends := []byte("prefix"), []int(nil)
		for range 12 {
			n, at, vars := rnd.IntN(60), days[rnd.IntN(2)], sn.Vars{"v": []string{"a", "zz"}[rnd.IntN(2)]}
			start, from := len(dst), len(ends)
			var errA error
			dst, ends, errA = a.AppendNextN(ctx, dst, ends, n, at, vars)
			want, errB := bg.NextNAt(ctx, n, at, vars)
			if (errA == nil) != (errB == nil) || len(ends)-from != len(want) {
				t.Fatalf("%s, n=%d: AppendNextN gave %d and %v, NextNAt %d and %v", tmpl, n, len(ends)-from, errA, len(want), errB)
			}
			if errA != nil {
				if !errors.Is(errA, sn.ErrOverflow) {
					t.Fatalf("%s: %v", tmpl, errA)
				}
				partial++
			}
			for i, end := range ends[from:] {
				got := string(dst[start:end])
				start = end
				if got != want[i] || seen[got] || !re.MatchString(got) {
					t.Fatalf("%s, n=%d, number %d: %q; NextNAt %q; seen before %v; matches %s: %v", tmpl, n, i, got, want[i], seen[got], a.Regexp(), re.MatchString(got))
				}
				seen[got] = true
				keep = append(keep, kept{want[i], strings.Clone(want[i])})
			}
			numbers += len(want)
		}
	}
	for _, k := range keep {
		if k.got != k.copy {
			t.Fatalf("a string NextNAt returned changed from %q to %q", k.copy, k.got)
		}
	}
	if compiled < 200 || partial == 0 {
		t.Fatalf("%d templates compiled, %d batches overflowed partway: the test no longer tries what it means to", compiled, partial)
	}
	t.Logf("%d templates, %d numbers, %d batches overflowed partway: AppendNextN and NextNAt agree, 0 repeats", compiled, numbers, partial)
}
