package sn_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/sngen/sn"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestExplainGolden(t *testing.T) {
	tests := []struct{ name, tpl string }{
		{"jd", `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`},
		{"daily", `@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`},
		{"per-unit", `@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=5, key=unit>`},
		{"s10", `RR@<seq, width=8>@<checksum, algo=s10>CN`},
		{"reordered", `@<seq, width=4, overflow=grow>X@<date, format=yyMM>Y@<random, width=3, alphabet=A-Z>@<checksum, algo=mod37-2, over=all>`},
		{"per-call-owner", `@<ownerKey, maxlen=4>:@<date, format=yyyy>:@<seq, reset=year>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustNew(t, tt.tpl).Explain().String()
			path := filepath.Join("testdata", "explain", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Explain() for %s:\n%s\nwant (%s):\n%s", tt.tpl, got, path, want)
			}
		})
	}
}

// FuzzNew checks that no template makes New panic, and that a template
// that compiles gives numbers that Validate accepts and Parse reads back as
// the counter key and the number drawn.
func FuzzNew(f *testing.F) {
	for _, s := range []string{
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`@<area>-@<unit>-@<seq, width=5, key=unit>`,
		`QJ@<seq, width=6>`, `RR@<seq, width=8>@<checksum, algo=s10>CN`,
		`a@@b@<seq, width="3">@<random, width=2>`, `@<seq, reset=day>`, `@<`, `@<seq`, `@<x, y="\q">`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tpl string) {
		r := &keyRecorder{}
		g, err := sn.New(tpl, sn.WithSequence("seq", r))
		if err != nil {
			return
		}
		s, err := first(g.Issue(ctx, sn.Request{Vars: sn.Vars{"area": "a", "unit": "u", "x": "v"}}))
		if err != nil {
			return // missing variables, overflow: errors, not panics
		}
		if err := g.Validate(s); err != nil {
			t.Errorf("template %q: Validate(%q) = %v", tpl, s, err)
		}
		p, err := g.Parse(s)
		if err != nil {
			t.Fatalf("template %q: Parse(%q) = %v", tpl, s, err)
		}
		if len(p.Draws) != len(r.keys) {
			t.Fatalf("template %q: Parse(%q) read %d draws, the sequence gave %d", tpl, s, len(p.Draws), len(r.keys))
		}
		for i, d := range p.Draws {
			if d.Key != r.keys[i] || d.Seq != int64(i+1) {
				t.Errorf("template %q: Parse(%q) draw %d = %q %d, want %q %d", tpl, s, i, d.Key, d.Seq, r.keys[i], i+1)
			}
		}
		if g2, err := sn.New(g.String(), mem()); err != nil || g2.String() != g.String() {
			t.Errorf("template %q: canonical %q does not compile to itself: %v", tpl, g.String(), err)
		}
	})
}
