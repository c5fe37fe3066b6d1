package engine

import (
	"bytes"
	"fmt"
	"math"
	"slices"
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

// A run of numbers rendered by sink.runs, each changed in place from the
// one before when it can be, prints what renderSimple prints number by
// number: across carries (9 to 10, 99 to 100, 0999 to 1000), widths,
// overflow, jumps and every check algorithm, with text before the run in
// the buffer, into ends, strings and JSON; and, but for a number refused,
// nothing is written past the numbers.
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
			// What renderSimple prints number by number, without those
			// it refuses.
			var want []string
			for _, n := range nums {
				if w, err := pl.renderSimple(nil, n); err == nil {
					want = append(want, string(w))
				}
			}
			var quoted []byte
			for _, w := range want {
				quoted = append(quoted, `"`+w+`",`...)
			}
			for _, mode := range []sink{{}, {strs: true}, {json: true}} {
				s := mode
				// Room past the numbers, marked: nothing may be written
				// there.
				room := make([]byte, 1<<17)
				for i := range room {
					room[i] = 0xAA
				}
				s.dst = append(room[:0], "before|"...)
				form := pl.simple
				if s.json {
					if form = pl.quoted; form == nil {
						continue // numbers of other checks are tested one by one
					}
				}
				// As appendMany stops at an error, start again after it.
				failed := false
				for rest := nums; len(rest) > 0; {
					before := s.n
					err := s.runs(form, rest)
					if err == nil {
						break
					}
					done := s.n - before
					if _, want := pl.renderSimple(nil, rest[done]); want == nil {
						t.Fatalf("%s: %d: %v, alone no error", src, rest[done], err)
					}
					rest = rest[done+1:]
					failed = true // the refused number was written, then dropped
				}
				if past := s.dst[len(s.dst):cap(s.dst)]; !failed && (&s.dst[0] != &room[0] || bytes.Count(past, []byte{0xAA}) != len(past)) {
					t.Fatalf("%s: %v: a byte written past the numbers, or the buffer moved", src, nums)
				}
				var got []string
				switch {
				case s.json:
					if string(s.dst) != "before|"+string(quoted) {
						t.Fatalf("%s: %v as JSON: %s, want %s", src, nums, s.dst, quoted)
					}
					got = want[:s.n]
				case s.strs:
					got = s.out
				default:
					start := len("before|")
					for _, end := range s.ends {
						got = append(got, string(s.dst[start:end]))
						start = end
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: %v (json %v, strs %v): run %q, alone %q", src, nums, s.json, s.strs, got, want)
				}
			}
		}
	}
}

// FuzzRuns checks sink.runs against renderSimple on runs of values from
// anywhere, of any length, with jumps, in every width, as JSON and not:
//
//	go test ./internal/engine -run '^$' -fuzz FuzzRuns -fuzztime 60s
func FuzzRuns(f *testing.F) {
	f.Add(int64(1), uint16(100), uint8(8), true, uint8(0), false)
	f.Add(int64(99_999_990), uint16(30), uint8(8), true, uint8(7), true)
	f.Add(int64(math.MaxInt64-20), uint16(30), uint8(0), false, uint8(3), false)
	plans := map[[2]int]*Plan{}
	f.Fuzz(func(t *testing.T, start int64, count uint16, width uint8, luhn bool, jump uint8, json bool) {
		if start < 1 {
			return
		}
		key := [2]int{int(width % 20), 0}
		src := fmt.Sprintf("X-@<seq, width=%d>", key[0])
		if key[0] == 0 {
			src = "X-@<seq>"
		}
		if luhn {
			key[1] = 1
			src += "-@<checksum, algo=luhn>"
		}
		pl := plans[key]
		if pl == nil {
			pl = compileForTest(t, src)
			plans[key] = pl
		}
		var vals []int64
		for v, i := start, 0; i < int(count%2000) && v > 0; i++ {
			vals = append(vals, v)
			v++
			if jump > 0 && i%int(jump) == 0 {
				v += int64(jump)
			}
		}
		s := sink{json: json}
		form := pl.simple
		if json {
			form = pl.quoted
		}
		err := s.runs(form, vals)
		var want []byte
		for i, v := range vals[:s.n] {
			w, werr := pl.renderSimple(nil, v)
			if werr != nil {
				t.Fatalf("%s: %d: %v, but runs went on", src, v, werr)
			}
			if json {
				want = append(append(append(want, '"'), w...), '"', ',')
			} else {
				want = append(want, w...)
				if s.ends[i] != len(want) {
					t.Fatalf("%s: end %d of %d, want %d", src, i, s.ends[i], len(want))
				}
			}
		}
		if string(s.dst) != string(want) {
			t.Fatalf("%s: %v: %q, want %q", src, vals, s.dst, want)
		}
		if err != nil {
			if _, werr := pl.renderSimple(nil, vals[s.n]); werr == nil {
				t.Fatalf("%s: %d: %v, alone none", src, vals[s.n], err)
			}
		} else if s.n != len(vals) {
			t.Fatalf("%s: %d of %d numbers, no error", src, s.n, len(vals))
		}
	})
}
