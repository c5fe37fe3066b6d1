package engine

import (
	"testing"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/lang"
	"github.com/sngen/sn/sequence"
)

// BenchmarkProof measures the part of Compile that proves a template
// unambiguous: the product search over its automaton, which finds nothing
// for these templates.
func BenchmarkProof(b *testing.B) {
	cfg := Config{
		Seqs:  map[string]sequence.Gen{"seq": sequence.NewMemory()},
		Exprs: map[string]expression.Factory{"date": builtin.NewDate, "checksum": builtin.NewChecksum, "random": builtin.NewRandom},
	}
	for _, tpl := range []string{
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`@<area>-@<unit>-@<seq, width=5, key=unit>`,
		`RR@<seq, width=8>@<checksum, algo=s10>CN`,
	} {
		pl, err := Compile(tpl, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tpl, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ws, err := lang.Ambiguous(pl.chain, pl.chain, false, 64, 1, stateLimit)
				if len(ws) > 0 || err != nil {
					b.Fatal(ws, err)
				}
			}
		})
	}
}
