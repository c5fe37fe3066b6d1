package engine

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/internal/batchjson"
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
	if (f.check == nil || f.luhn) && batchjson.Clean([]byte(f.pre+f.mid+f.post)) {
		// Digits and text that JSON takes as they are: the same form,
		// framed as a JSON string and a comma, prints a JSON list.
		q := *f
		q.pre, q.post = `"`+f.pre, f.post+`",`
		pl.quoted = &q
	}
}

// renderSimple appends the number whose sequence value is n.
func (pl *Plan) renderSimple(dst []byte, n int64) ([]byte, error) {
	return pl.simple.render(dst, n, nil)
}

// render appends the number whose sequence value is n. With d, it says
// there where the number's digits and Luhn digit are, for sink.runs to
// go on from it.
func (f *simple) render(dst []byte, n int64, d *decade) ([]byte, error) {
	start := len(dst)
	dst = append(dst, f.pre...)
	s := len(dst)
	sum := 0
	if f.luhn {
		dst, sum = appendIntLuhnSum(dst, n, f.seq.Width)
	} else {
		dst = appendInt(dst, n, f.seq.Width)
	}
	e := len(dst)
	if w := f.seq.Width; w > 0 && !f.seq.Grow && e-s > w {
		return dst[:start], f.seq.fail(fmt.Errorf("%w: %d has more than %d digits (use overflow=grow to allow it)", ErrOverflow, n, w))
	}
	dst = append(dst, f.mid...)
	check := -1
	if f.check != nil {
		check = len(dst) - start
		if f.luhn {
			dst = append(dst, luhnCheck[sum%10])
		} else {
			var err error
			if dst, err = f.check.appendCheck(dst, dst[s:e]); err != nil {
				return dst[:start], err
			}
		}
	}
	dst = append(dst, f.post...)
	if d != nil {
		*d = decade{at: start, length: len(dst) - start, first: s - start, digit: e - 1 - start, check: check, sum: sum % 10, n: n, last: dst[e-1] - '0'}
	}
	return dst, nil
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

// runs appends to s the numbers of form f whose sequence values are
// vals, one after another. Nine numbers in ten of a batch drawn from a
// block are the one before with the last digit one up and, with a Luhn
// check, the check digit worked out from the change. So runs renders a
// number whole (simple.render's work) only at the start of a run of
// values or after a jump, counts the digits up in place at a carry (…9 to
// …0), and writes the numbers after either, up to the next carry, from
// that one (sink.fill).
func (s *sink) runs(f *simple, vals []int64) error {
	dst := s.dst
	var d decade // d.at < 0: no number to go on from
	d.at = -1
	incremental := f.check == nil || f.luhn
	for j := 0; j < len(vals); j++ {
		v := vals[j]
		at := len(dst)
		if d.at >= 0 && v == d.n+1 && d.last == 9 {
			// A carry: the number before, counted up in place.
			prev := at - d.length
			dst = append(dst, dst[prev:at]...)
			num := dst[at:]
			i := d.digit
			for i >= d.first && num[i] == '9' {
				num[i] = '0'
				i--
			}
			if i >= d.first {
				num[i]++
				if f.check != nil {
					// The k nines, now zeros, each took 9 (doubled or
					// not) from the sum; the digit counted up adds its
					// own change.
					k := d.digit - i
					x := num[i] - '0'
					change := 1
					if k%2 == 0 {
						change = int(doubledDigit[x]) - int(doubledDigit[x-1])
					}
					d.sum = (d.sum + 10 + k%10 + change) % 10
					num[d.check] = luhnCheck[d.sum]
				}
				d.at, d.n, d.last = at, v, 0
				s.add(dst, at)
				dst = s.fill(dst, &d, vals[j+1:])
				j += int(d.n - v)
				continue
			}
			dst = dst[:at] // every digit was a 9: the number needs one more
		}
		// Rendered whole; with a Luhn check or none, the ones after it
		// are written from it.
		d.at = -1
		var err error
		if incremental {
			dst, err = f.render(dst, v, &d)
		} else {
			dst, err = f.render(dst, v, nil)
		}
		if err != nil {
			s.dst = dst
			return err
		}
		s.add(dst, at)
		if incremental {
			dst = s.fill(dst, &d, vals[j+1:])
			j += int(d.n - v)
		}
	}
	s.dst = dst
	return nil
}

// decade is the number runs rendered last, and where its digits are.
type decade struct {
	at, length   int   // its offset in dst and its length
	first, digit int   // offsets in it of the sequence's first and last digits
	check        int   // the offset of its Luhn digit; -1: none
	sum          int   // the Luhn sum of its digits modulo 10
	n            int64 // its sequence value
	last         byte  // its last digit, 0-9
}

// fill appends the numbers after d's, one above the other, while their
// values, the first of vals on, go up by one and their last digit stays
// below 10; it records them in s and in d. Each is d's with its last
// digit and check changed: d's number is read once, and each written
// whole, then its two bytes; nothing is written past the last.
func (s *sink) fill(dst []byte, d *decade, vals []int64) []byte {
	m := 0
	for m < len(vals) && m < int(9-d.last) && vals[m] == d.n+int64(m)+1 {
		m++
	}
	if m == 0 {
		return dst
	}
	if cap(dst)-len(dst) < m*d.length {
		dst = slices.Grow(dst, m*d.length)
	}
	at, end := len(dst), len(dst)+m*d.length
	w := dst[:end]
	checks := &luhnChecks[(d.sum+10-int(doubledDigit[d.last]))%10]
	// Each number is d's, written with two overlapping stores of 16 (or
	// 8) bytes, the same two for every number, then its last digit and
	// its check. A number of more than 32 bytes or fewer than 8 is
	// copied.
	l := d.length
	switch {
	case l >= 16 && l <= 32:
		lo, hi := *(*[16]byte)(w[d.at:]), *(*[16]byte)(w[d.at+l-16:])
		for ; at < end; at += l {
			*(*[16]byte)(w[at:]) = lo
			*(*[16]byte)(w[at+l-16:]) = hi
		}
	case l >= 8 && l < 16:
		lo, hi := *(*[8]byte)(w[d.at:]), *(*[8]byte)(w[d.at+l-8:])
		for ; at < end; at += l {
			*(*[8]byte)(w[at:]) = lo
			*(*[8]byte)(w[at+l-8:]) = hi
		}
	default:
		for ; at < end; at += l {
			copy(w[at:at+l], w[d.at:d.at+l])
		}
	}
	at = len(dst)
	for k := 1; k <= m; k++ {
		last := d.last + byte(k)
		w[at+d.digit] = '0' + last
		if d.check >= 0 {
			w[at+d.check] = checks[last]
		}
		at += l
	}
	start := len(dst)
	dst = w
	for k := range m {
		s.add(dst[:start+(k+1)*d.length], start+k*d.length)
	}
	// The last number written is the one to go on from.
	if d.check >= 0 {
		d.sum = (d.sum + 10 + int(doubledDigit[d.last+byte(m)]) - int(doubledDigit[d.last])) % 10
	}
	d.at, d.n, d.last = at-d.length, d.n+int64(m), d.last+byte(m)
	return dst
}

// add records the number dst[at:], just appended.
func (s *sink) add(dst []byte, at int) {
	switch {
	case s.json:
	case !s.strs:
		s.ends = append(s.ends, len(dst))
	case len(dst) == at:
		s.out = append(s.out, "")
	default:
		s.out = append(s.out, unsafe.String(&dst[at], len(dst)-at))
	}
	s.n++
}

// luhnCheck[s] is the Luhn check digit of digits whose sum is s modulo 10.
var luhnCheck = [10]byte{'0', '9', '8', '7', '6', '5', '4', '3', '2', '1'}

// luhnChecks[s][d] is the Luhn check digit of digits whose sum without
// the last, d, is s modulo 10.
var luhnChecks = func() (t [10][10]byte) {
	for s := range t {
		for d := range t[s] {
			t[s][d] = luhnCheck[(s+int(doubledDigit[d]))%10]
		}
	}
	return t
}()

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
