package sn_test

import (
	"context"
	"errors"
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
