package engine

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/sequence"
)

// The simple renderer prints what the general direct renderer prints, for
// every template of the simple form, at the edges of every digit count.
func TestSimpleMatchesDirect(t *testing.T) {
	values := []int64{1, 7, 9, 10, 11, 99, 100, 101, 999, 1000, 1024, 65535, 99999999, 100000000, 123456789012, math.MaxInt64 - 1, math.MaxInt64}
	for _, tt := range []struct {
		src    string
		simple bool
	}{
		{`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, true},
		{`QJ@<seq, width=6>`, true},
		{`@<seq>`, true},
		{`A@<seq, width=4, overflow=grow>@<checksum, algo=luhn>Z`, true},
		{`INV@<seq, width=10>/@<checksum, algo=mod11-2>`, true},
		{`X@<seq>@<checksum, algo=verhoeff>-@<checksum, algo=damm>`, false}, // two checks
	} {
		src := tt.src
		pl := compileForTest(t, src)
		if (pl.simple != nil) != tt.simple {
			t.Errorf("%s: simple %v, want %v", src, pl.simple != nil, tt.simple)
		}
		for _, n := range values {
			in := inputs{one: n}
			want, wantErr := pl.renderDirect(nil, &in)
			if pl.simple == nil {
				continue
			}
			got, err := pl.renderSimple(nil, n)
			if string(got) != string(want) || (err == nil) != (wantErr == nil) {
				t.Errorf("%s, %d: simple %q, %v; direct %q, %v", src, n, got, err, want, wantErr)
			}
		}
	}
}

// The Luhn digit computed with the digits is the checksum package's.
func TestAppendIntLuhn(t *testing.T) {
	luhn, _ := checksum.Lookup("luhn")
	for _, width := range []int{0, 1, 8, 19} {
		for n := int64(1); n < 3000; n = n*7/5 + 1 {
			digits, check := appendIntLuhn(nil, n, width)
			if want := fmt.Sprintf("%0*d", width, n); string(digits) != want {
				t.Fatalf("%d width %d: digits %q, want %q", n, width, digits, want)
			}
			want, err := luhn.Compute(string(digits))
			if err != nil || string(check) != want {
				t.Fatalf("%d width %d: check %c, want %s (%v)", n, width, check, want, err)
			}
		}
	}
	for u := uint64(0); u < 1<<16; u++ {
		if got, want := decimalLen(u), len(strconv.FormatUint(u, 10)); got != want {
			t.Fatalf("decimalLen(%d) = %d, want %d", u, got, want)
		}
	}
	for i := range pow10 {
		for _, u := range []uint64{pow10[i] - 1, pow10[i], pow10[i] + 1} {
			if got, want := decimalLen(u), len(strconv.FormatUint(u, 10)); got != want {
				t.Fatalf("decimalLen(%d) = %d, want %d", u, got, want)
			}
		}
	}
}

func compileForTest(t *testing.T, src string) *Plan {
	t.Helper()
	pl, err := Compile(src, testConfig(map[string]sequence.Gen{"seq": sequence.NewMemory()}, nil))
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return pl
}

// A run of numbers rendered by renderRun, each changed in place from the
// one before when it can be, prints what renderSimple prints number by
// number: across carries (9 to 10, 99 to 100), widths, overflow, jumps
// and every check algorithm, with text before the run in the buffer.
func TestRenderRun(t *testing.T) {
	templates := []string{
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		`QJ@<seq, width=6>`,
		`@<seq>`,
		`@<seq>@<checksum, algo=luhn>`,
		`A@<seq, width=2>@<checksum, algo=luhn>Z`,
		`A@<seq, width=4, overflow=grow>@<checksum, algo=luhn>Z`,
		`INV@<seq, width=10>/@<checksum, algo=mod11-2>`,
		`V@<seq, width=3>@<checksum, algo=verhoeff>`,
	}
	runs := [][]int64{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		{95, 96, 97, 98, 99, 100, 101, 102, 5, 6, 7, 1000, 1001, 9998, 9999, 10000, 10001},
		{math.MaxInt64 - 3, math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64},
		{7, 7, 8, 10, 9, 10, 11},
	}
	for i := int64(0); i < 2000; i++ {
		runs[0] = append(runs[0], 13+i)
	}
	for _, src := range templates {
		pl := compileForTest(t, src)
		if pl.simple == nil {
			t.Fatalf("%s: not simple", src)
		}
		for _, nums := range runs {
			got := []byte("before|")
			var r run
			var ends []int
			for _, n := range nums {
				var err error
				if got, err = pl.renderRun(got, n, &r); err != nil {
					r = run{} // as appendMany stops at an error; start again
				}
				ends = append(ends, len(got))
			}
			start := len("before|")
			for k, n := range nums {
				want, wantErr := pl.renderSimple(nil, n)
				if wantErr != nil {
					want = nil
				}
				if g := got[start:ends[k]]; string(g) != string(want) {
					t.Fatalf("%s: %d after %v: run %q, alone %q", src, n, nums[max(0, k-1)], g, want)
				}
				start = ends[k]
			}
		}
	}
}
