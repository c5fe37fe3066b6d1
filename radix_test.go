package sn_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sngen/sn"
)

// Sequences printed in other bases: each number once, at the width, read
// back by Parse, and refused past the width.
func TestRadix(t *testing.T) {
	tests := []struct {
		tpl   string
		first []string
		last  string // the number 36^2-1 or the like, where it overflows next
		max   int64
	}{
		{`T-@<seq, width=2, radix=36>`, []string{"T-01", "T-02", "T-03"}, "T-ZZ", 36*36 - 1},
		{`T-@<seq, width=2, radix=62>`, []string{"T-01", "T-02"}, "T-zz", 62*62 - 1},
		{`T-@<seq, width=3, alphabet=0-9A-HJ-NP-Z>`, []string{"T-001"}, "T-ZZZ", 34*34*34 - 1}, // no I, no O
		{`T-@<seq, width=8, radix=2>`, []string{"T-00000001", "T-00000010", "T-00000011"}, "T-11111111", 255},
		{`T-@<seq, width=2, radix=16, obfuscate=k>`, nil, "", 255},
	}
	for _, tt := range tests {
		g := mustNew(t, tt.tpl, sn.WithObfuscation("k", orderKey))
		seen := map[string]bool{}
		for n := int64(1); n <= tt.max; n++ {
			s, err := g.Next(ctx)
			if err != nil {
				t.Fatalf("%s: number %d: %v", tt.tpl, n, err)
			}
			if int(n) <= len(tt.first) && s != tt.first[n-1] {
				t.Errorf("%s: number %d prints %q, want %q", tt.tpl, n, s, tt.first[n-1])
			}
			if n == tt.max && tt.last != "" && s != tt.last {
				t.Errorf("%s: number %d prints %q, want %q", tt.tpl, n, s, tt.last)
			}
			if seen[s] {
				t.Fatalf("%s: %q twice", tt.tpl, s)
			}
			seen[s] = true
			if p, err := g.Parse(s); err != nil || p.Seq != n {
				t.Fatalf("%s: Parse(%q) = %d, %v; drew %d", tt.tpl, s, p.Seq, err, n)
			}
			if m, _ := regexpMatch(g.Regexp(), s); !m {
				t.Fatalf("%s: %q does not match %s", tt.tpl, s, g.Regexp())
			}
		}
		if _, err := g.Next(ctx); !errors.Is(err, sn.ErrOverflow) {
			t.Errorf("%s: past the width: %v, want ErrOverflow", tt.tpl, err)
		}
	}
}

func TestRadixErrors(t *testing.T) {
	tests := []struct{ tpl, want string }{
		{`@<seq, radix=63>`, `radix`},
		{`@<seq, radix=1>`, `radix`},
		{`@<seq, radix=16, alphabet=0-9A-F>`, `radix= and alphabet= both give the digits: use one`},
		{`@<seq, alphabet=AA>`, `alphabet="AA": want printable ASCII characters, each once`},
		{`@<seq, width=12, radix=62>`, `width`},                             // 62^11 > 2^63
		{`@<seq, width=4, radix=36>@<checksum, algo=luhn>`, `luhn`},         // luhn takes digits only
		{`@<seq, radix=36>@<code, chars=A-Z, maxlen=2>`, `ambiguous`},       // letters are digits now: "1AB" splits two ways
		{`@<seq, width=12, radix=36, obfuscate=k>`, `at most 2^62 numbers`}, // 36^12 > 2^62
	}
	for _, tt := range tests {
		_, err := sn.New(tt.tpl, mem(), sn.WithObfuscation("k", orderKey))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s) = %v, want an error with %q", tt.tpl, err, tt.want)
		}
	}
}

// radix=36 and alphabet=0-9A-Z are one series; radix=36 and decimal are
// two, and CheckSet refuses them on one store.
func TestRadixSeries(t *testing.T) {
	a := mustNew(t, `T-@<seq, width=4, radix=36>`)
	b := mustNew(t, `T-@<seq, width=4, alphabet=0-9A-Z>`)
	d := mustNew(t, `T-@<seq, width=4>`)
	sa, _ := a.Next(ctx)
	sb, _ := b.Next(ctx)
	sd, _ := d.Next(ctx)
	pa, _ := a.Parse(sa)
	pb, _ := b.Parse(sb)
	pd, _ := d.Parse(sd)
	if pa.Key != pb.Key || pa.Key == pd.Key {
		t.Errorf("keys %q, %q, %q", pa.Key, pb.Key, pd.Key)
	}
	if err := sn.CheckSet([]sn.Member{{Name: "dec", Gen: d, Store: "db"}, {Name: "b36", Gen: a, Store: "db"}}); !errors.Is(err, sn.ErrAmbiguous) {
		t.Errorf("CheckSet(decimal, base 36) = %v, want ErrAmbiguous", err)
	}
}

func ExampleGenerator_radix() {
	g := sn.MustNew(`TK-@<seq, width=6, radix=36>`, mem())
	for range 3 {
		s, _ := g.Next(ctx)
		fmt.Println(s)
	}
	// Output:
	// TK-000001
	// TK-000002
	// TK-000003
}

func regexpMatch(pattern, s string) (bool, error) { return regexp.MatchString(pattern, s) }
