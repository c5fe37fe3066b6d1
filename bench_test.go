package sn_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// handWritten is what a careful Go developer would write by hand for
// "SN-%08d-<luhn>": strconv, padding and the Luhn digit, into one string.
func handWritten(n int64) string {
	var buf [32]byte
	return string(appendHandWritten(buf[:0], n))
}

func TestHandWrittenMatches(t *testing.T) {
	g := mustNew(t, `@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`)
	for i := int64(1); i <= 2000; i++ {
		if got, want := next(t, g, nil), handWritten(i); got != want {
			t.Fatalf("number %d: sn %q, hand-written %q", i, got, want)
		}
	}
}

var sink string

// BenchmarkNext compares, in one run, sn's Next on the seed template with
// the memory sequence against the same string made by hand from an atomic
// counter. The target is at most 1.5x the hand-written time.
func BenchmarkNext(b *testing.B) {
	b.Run("handwritten", func(b *testing.B) {
		var c atomic.Int64
		b.ReportAllocs()
		for b.Loop() {
			sink = handWritten(c.Add(1))
		}
	})
	b.Run("sn", func(b *testing.B) {
		g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
		b.ReportAllocs()
		for b.Loop() {
			s, err := g.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sink = s
		}
	})
	b.Run("sn-parallel", func(b *testing.B) {
		g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := g.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("handwritten-parallel", func(b *testing.B) {
		var c atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = handWritten(c.Add(1))
			}
		})
	})
}

// appendHandWritten appends the number handWritten returns.
func appendHandWritten(dst []byte, n int64) []byte {
	dst = append(dst, "SN-"...)
	start := len(dst)
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	for i := len(d); i < 8; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, d...)
	payload := dst[start:]
	sum, double := 0, true
	for i := len(payload) - 1; i >= 0; i-- {
		v := int(payload[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return append(dst, '-', byte('0'+(10-sum%10)%10))
}

// BenchmarkAppend compares Append into a reused Batch with the same number
// appended by hand: no allocation on either side.
func BenchmarkAppend(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("handwritten", func(b *testing.B) {
		var c atomic.Int64
		b.ReportAllocs()
		for b.Loop() {
			buf = appendHandWritten(buf[:0], c.Add(1))
		}
	})
	b.Run("sn", func(b *testing.B) {
		g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
		var bt sn.Batch
		b.ReportAllocs()
		for b.Loop() {
			bt.Reset()
			if err := g.Append(ctx, &bt, sn.Request{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNextN compares, per number, NextN(100) with Next: a batch draws
// once and renders into one buffer.
func BenchmarkNextN(b *testing.B) {
	// A fresh counter per run: eight digits hold 10^8 numbers.
	newGen := func() *sn.Generator {
		return sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
	}
	b.Run("Next", func(b *testing.B) {
		g := newGen()
		b.ReportAllocs()
		for b.Loop() {
			s, err := g.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sink = s
		}
	})
	b.Run("NextN100", func(b *testing.B) {
		g := newGen()
		b.ReportAllocs()
		for b.Loop() {
			out, err := g.Issue(ctx, sn.Request{N: 100})
			if err != nil {
				b.Fatal(err)
			}
			sink = out[99]
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/number")
	})
}

func BenchmarkValidate(b *testing.B) {
	g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Validate("SN-00000001-8"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew measures compiling the seed templates, the proof that they
// never print one string twice included.
func BenchmarkNew(b *testing.B) {
	for _, tpl := range []string{
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`@<area>-@<unit>-@<seq, width=5, key=unit>`,
		`RR@<seq, width=8>@<checksum, algo=s10>CN`,
	} {
		b.Run(tpl, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sn.New(tpl, mem()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReset compares a counter per second, which the clock guard
// watches, with a counter per day, which it does not: the guard's cost per
// number. Both draw from a Segment over a memory store at a fixed instant
// (one period, the hot path): the present's, since the guard refuses an
// instant long before the store's clock.
//
//	go test -run '^$' -bench Reset -count 5 .
func BenchmarkReset(b *testing.B) {
	at := time.Now()
	for _, tt := range []struct{ name, tpl string }{
		{"day", `@<date, format=yyyyMMddHHmmss>-@<seq, width=9, reset=day>`},
		{"second (guarded)", `@<date, format=yyyyMMddHHmmss>-@<seq, width=9, reset=second>`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
			g, err := sn.New(tt.tpl, sn.WithSequence("seq", seg), sn.WithClock(func() time.Time { return at }))
			if err != nil {
				b.Fatal(err)
			}
			var bt sn.Batch
			b.ReportAllocs()
			for b.Loop() {
				bt.Reset()
				if err := g.Append(ctx, &bt, sn.Request{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendBatch appends batches of 1,000 numbers drawn from a
// Segment, as sn serve does for {"n": 1000}: into a Batch (Append) and
// as JSON (AppendJSON, what sn serve calls). It reports the time per
// number.
func BenchmarkAppendBatch(b *testing.B) {
	seg, err := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer seg.Close()
	g := sn.MustNew(`SN-@<seq, width=10>-@<checksum, algo=luhn>`, sn.WithSequence("seq", seg))
	b.Run("Append", func(b *testing.B) {
		var bt sn.Batch
		b.ReportAllocs()
		for b.Loop() {
			bt.Reset()
			if err := g.Append(ctx, &bt, sn.Request{N: 1000}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/number")
	})
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, _, err = g.AppendJSON(ctx, buf[:0], sn.Request{N: 1000}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/number")
	})
}
