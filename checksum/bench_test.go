package checksum_test

import (
	"strconv"
	"testing"

	"github.com/sngen/sn/checksum"
)

// benchPayload is an 8-digit sequence value, the common case in sn.
const benchPayload = "00001024"

func BenchmarkCompute(b *testing.B) {
	for _, name := range allNames {
		b.Run(name, func(b *testing.B) {
			a := lookup(b, name)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Compute(benchPayload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendCheck(b *testing.B) {
	for _, name := range allNames {
		b.Run(name, func(b *testing.B) {
			ap := lookup(b, name).(checksum.Appender)
			p := []byte(benchPayload)
			buf := make([]byte, 0, 16)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = ap.AppendCheck(buf[:0], p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, name := range allNames {
		b.Run(name, func(b *testing.B) {
			a := lookup(b, name)
			c, err := a.Compute(benchPayload)
			if err != nil {
				b.Fatal(err)
			}
			s := benchPayload + c
			b.ReportAllocs()
			for b.Loop() {
				if !a.Validate(s) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkBaselineAppendInt formats the sequence value itself, the work a
// checksum is added to, for comparison with BenchmarkAppendCheck.
func BenchmarkBaselineAppendInt(b *testing.B) {
	buf := make([]byte, 0, 16)
	n := int64(1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = strconv.AppendInt(buf[:0], n, 10)
	}
}
