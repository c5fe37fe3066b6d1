package engine

import (
	"math"
	"testing"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/sequence"
)

// FuzzSeqDigits prints a number in a random radix and width, with and
// without obfuscation, and reads it back.
func FuzzSeqDigits(f *testing.F) {
	f.Add(uint8(36), uint8(6), int64(12345), true)
	f.Add(uint8(2), uint8(0), int64(math.MaxInt64), false)
	f.Add(uint8(62), uint8(10), int64(1), true)
	f.Fuzz(func(t *testing.T, radix, width uint8, n int64, obf bool) {
		args := expression.Args{"radix": itoa(2 + int(radix)%61)}
		p := &Part{Name: "seq"}
		c := &compiler{cfg: Config{Keys: map[string][]byte{"k": []byte("0123456789abcdef")}}}
		if width > 0 {
			args["width"] = itoa(int(width) % 64)
		}
		if obf {
			args["obfuscate"] = "k"
		}
		if err := c.seqPart(p, sequence.NewMemory(), args); err != nil {
			return // a width too wide for the radix, or for obfuscate=
		}
		if n <= 0 || (p.maxSeq > 0 && n > p.maxSeq) {
			return
		}
		text, err := p.appendSeq(nil, n)
		if err != nil {
			t.Fatalf("%v: appendSeq(%d): %v", args, n, err)
		}
		if p.Width > 0 && len(text) != p.Width {
			t.Fatalf("%v: %d prints %q, not %d digits", args, n, text, p.Width)
		}
		back, err := p.seqValue(string(text))
		if err != nil || back != n {
			t.Fatalf("%v: %d prints %q, which reads back as %d, %v", args, n, text, back, err)
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
