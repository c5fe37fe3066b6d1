package engine

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/sngen/sn/checksum"
)

// simple is the renderer of the commonest plans, compiled at New: literal
// text, one sequence, literal text, an optional check over the sequence's
// digits, literal text ("SN-@<seq, width=8>-@<checksum, algo=luhn>"). It
// runs no loop over parts and calls no interface: the literals are copied
// once, and the sequence's digits, its padding and, for Luhn, its check
// digit come out of one pass over the number.
type simple struct {
	pre, mid, post string
	seq            *Part
	check          *Part // nil: no check
	luhn           bool  // check is the built-in Luhn, computed with the digits
}

// luhnAlgo is the built-in Luhn algorithm, which simple computes itself.
var luhnAlgo, _ = checksum.Lookup("luhn")

// compileSimple sets pl.simple when the plan's direct steps have the simple
// form.
func (pl *Plan) compileSimple() {
	if !pl.direct || len(pl.seqs) != 1 {
		return
	}
	f := &simple{}
	text := &f.pre // where literal text goes
	for i := range pl.ops {
		o := &pl.ops[i]
		switch {
		case o.kind == Text:
			*text += o.lit
		case o.kind == Seq && f.seq == nil:
			f.seq, text = o.part, &f.mid
		case o.kind == Checksum && f.seq != nil && f.check == nil && o.seq == 0 && !o.part.untrusted:
			f.check, text = o.part, &f.post
			f.luhn = o.part.check.Algo == luhnAlgo
		default:
			return
		}
	}
	if f.seq == nil || f.seq.perm != nil || f.seq.Digits != "" {
		return
	}
	pl.simple = f
}

// renderSimple appends the number whose sequence value is n.
func (pl *Plan) renderSimple(dst []byte, n int64) ([]byte, error) {
	f := pl.simple
	start := len(dst)
	dst = append(dst, f.pre...)
	s := len(dst)
	var check byte
	if f.luhn {
		dst, check = appendIntLuhn(dst, n, f.seq.Width)
	} else {
		dst = appendInt(dst, n, f.seq.Width)
	}
	e := len(dst)
	if w := f.seq.Width; w > 0 && !f.seq.Grow && e-s > w {
		return dst[:start], f.seq.fail(fmt.Errorf("%w: %d has more than %d digits (use overflow=grow to allow it)", ErrOverflow, n, w))
	}
	dst = append(dst, f.mid...)
	if f.check != nil {
		if f.luhn {
			dst = append(dst, check)
		} else {
			var err error
			if dst, err = f.check.appendCheck(dst, dst[s:e]); err != nil {
				return dst[:start], err
			}
		}
	}
	return append(dst, f.post...), nil
}

// appendIntLuhn is appendInt that also returns the Luhn check digit of the
// digits it appends: from the right, every other digit doubled, starting
// with the last. Padding zeros add nothing.
func appendIntLuhn(dst []byte, n int64, width int) ([]byte, byte) {
	dst, sum := appendIntLuhnSum(dst, n, width)
	return dst, byte('0' + (10-sum%10)%10)
}

// appendIntLuhnSum is appendIntLuhn returning the Luhn sum of the digits
// in place of the check digit.
func appendIntLuhnSum(dst []byte, n int64, width int) ([]byte, int) {
	u := uint64(n)
	size := max(decimalLen(u), width)
	start := len(dst)
	if cap(dst)-start < size {
		dst = slices.Grow(dst, size)
	}
	dst = dst[:start+size]
	b := dst[start:]
	i := len(b)
	sum := 0
	for u >= 100 {
		q := u / 100
		v := u - q*100
		i -= 2
		b[i], b[i+1] = digitPairs[2*v], digitPairs[2*v+1]
		sum += int(luhnPair[v])
		u = q
	}
	if u >= 10 {
		i -= 2
		b[i], b[i+1] = digitPairs[2*u], digitPairs[2*u+1]
		sum += int(luhnPair[u])
	} else {
		i--
		b[i] = byte('0' + u)
		sum += int(luhnPair[u]) // a lone digit is the low one of its pair: doubled
	}
	for i > 0 {
		i--
		b[i] = '0'
	}
	return dst, sum
}

// run is what renderRun knows of the number it rendered last, to render
// the next one, one above, by changing it in place.
type run struct {
	ok     bool  // the fields below hold
	digit  int   // the offset of the number's last digit of the sequence
	check  int   // the offset of its Luhn digit, with a check
	sum    int   // the Luhn sum of its digits modulo 10, with a check
	n      int64 // its sequence value
	length int   // its length
}

// renderRun appends the number whose sequence value is n, where the
// number before it in dst, at dst[len(dst)-r.length:], was rendered by
// renderRun with r. When n is one above that one's value and the last
// digit of its sequence is not 9, the number is that one with its last
// digit one up and, with a Luhn check, its check digit worked out from
// the change: a copy and two bytes, nine numbers in ten of a batch drawn
// from a block. Otherwise it renders n whole.
func (pl *Plan) renderRun(dst []byte, n int64, r *run) ([]byte, error) {
	f := pl.simple
	if r.ok && n == r.n+1 {
		prev := len(dst) - r.length
		if d := dst[prev+r.digit]; d != '9' {
			dst = append(dst, dst[prev:prev+r.length]...)
			at := prev + r.length
			dst[at+r.digit] = d + 1
			if f.check != nil {
				// r.sum is kept modulo 10; the last digit's share
				// changes by -8 to +2.
				t := r.sum + int(doubledDigit[d-'0'+1]) - int(doubledDigit[d-'0'])
				if t >= 10 {
					t -= 10
				} else if t < 0 {
					t += 10
				}
				r.sum = t
				dst[at+r.check] = luhnCheck[t]
			}
			r.n = n
			return dst, nil
		}
	}
	start := len(dst)
	r.ok = false
	if f.check != nil && !f.luhn {
		return pl.renderSimple(dst, n)
	}
	dst = append(dst, f.pre...)
	s := len(dst)
	dst, sum := appendIntLuhnSum(dst, n, f.seq.Width)
	e := len(dst)
	if w := f.seq.Width; w > 0 && !f.seq.Grow && e-s > w {
		return dst[:start], f.seq.fail(fmt.Errorf("%w: %d has more than %d digits (use overflow=grow to allow it)", ErrOverflow, n, w))
	}
	dst = append(dst, f.mid...)
	check := 0
	if f.check != nil {
		check = len(dst) - start
		dst = append(dst, byte('0'+(10-sum%10)%10))
	}
	dst = append(dst, f.post...)
	*r = run{ok: true, digit: e - 1 - start, check: check, sum: sum % 10, n: n, length: len(dst) - start}
	return dst, nil
}

// luhnCheck[s] is the Luhn check digit of digits whose sum is s modulo 10.
var luhnCheck = [10]byte{'0', '9', '8', '7', '6', '5', '4', '3', '2', '1'}

// doubledDigit[d] is d's share of a Luhn sum where it is doubled.
var doubledDigit = [10]uint8{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}

// luhnPair[v] is the Luhn sum of the two digits of v (0-99) when the low
// digit is doubled and the high one is not.
var luhnPair = func() (t [100]uint8) {
	for v := range t {
		t[v] = doubledDigit[v%10] + uint8(v/10)
	}
	return t
}()

// decimalLen returns the number of decimal digits of u (1 for 0).
func decimalLen(u uint64) int {
	t := bits.Len64(u) * 1233 >> 12 // floor(log10(2^bits)), one below or equal
	if t < len(pow10) && u >= pow10[t] {
		t++
	}
	return max(t, 1)
}

// pow10[i] is 10^i.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()
