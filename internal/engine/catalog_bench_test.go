package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/sequence"
)

// catalogTemplate returns the i-th of a mix of templates with distinct
// literal text: a prefix, a date first, an owner key, a variable first.
func catalogTemplate(i int) string {
	switch i % 8 {
	case 0, 1, 2:
		return fmt.Sprintf("P%d-@<seq, width=8>-@<checksum, algo=luhn>", i)
	case 3, 4:
		return fmt.Sprintf("@<date, format=yyyyMMdd>D%d@<seq, width=4, reset=day>", i)
	case 5, 6:
		return fmt.Sprintf("@<ownerKey, value=O%d>-@<seq, width=6>", i)
	}
	return fmt.Sprintf("@<area, chars=0-9, maxlen=3>-V%d-@<seq, width=5, key=area>", i)
}

// BenchmarkEnroll measures enrolling a new template in the catalog of a
// store that holds 1, 100 and 1,000 templates: reading the entries and
// proving against those whose ends meet the new one's. Warm: this process
// has read the entries before; cold: it has not (a new process, sn next),
// and rebuilds the templates it proves against.
//
//	go test -run '^$' -bench Enroll ./internal/engine
func BenchmarkEnroll(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 100, 1000} {
		for _, cold := range []bool{false, true} {
			name := fmt.Sprintf("templates=%d/warm", n)
			if cold {
				name = fmt.Sprintf("templates=%d/cold", n)
			}
			b.Run(name, func(b *testing.B) {
				store := sequence.NewMemoryAllocator()
				gen := must(sequence.NewSegment(store, sequence.SegmentOptions{}))
				defer gen.Close()
				cfg := Config{
					Seqs:  map[string]sequence.Gen{"seq": gen},
					Exprs: map[string]expression.Factory{"date": builtin.NewDate, "checksum": builtin.NewChecksum, "random": builtin.NewRandom},
				}
				for i := range n {
					pl, err := Compile(catalogTemplate(i), cfg)
					if err != nil {
						b.Fatal(err)
					}
					if err := pl.Enroll(ctx); err != nil {
						b.Fatal(err)
					}
				}
				i := 1 << 20
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					pl, err := Compile(catalogTemplate(i), cfg)
					i++
					if err != nil {
						b.Fatal(err)
					}
					if cold {
						recordedCache.Clear()
					}
					b.StartTimer()
					if err := pl.Enroll(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
