package checksum

// The ISO/IEC 7064 systems. A pure system MOD m-r computes
// c = (c*r + value) mod m over the payload and chooses the check value that
// makes the whole string, check included, come to 1. The hybrid system
// MOD 11,10 alternates moduli 10 and 11 and needs only decimal check digits.
//
// The pure systems keep c unreduced in a uint64 and reduce it only when
// another step could overflow, which gives the same result as reducing at
// every step and is several times faster.

// mod11x2 is ISO 7064 MOD 11-2: digits in, one check character 0-9 or X
// (value 10). ISNI and ORCID use it.
func mod11x2[T text](p T) (int, bool) {
	var c uint64
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		if c >= 1<<62 {
			c %= 11
		}
		c = 2*c + uint64(d)
	}
	return int((12 - 2*c%11) % 11), true
}

// mod11x10Next is the step of ISO 7064 MOD 11,10: from the product p in
// 1..10 and the next digit d, s = (p+d) mod 10 with 0 read as 10, and the
// next product is 2s mod 11.
var mod11x10Next = func() (t [11][10]uint8) {
	for p := 1; p <= 10; p++ {
		for d := range 10 {
			s := (p + d) % 10
			if s == 0 {
				s = 10
			}
			t[p][d] = uint8(2 * s % 11)
		}
	}
	return t
}()

// mod11x10 is the ISO 7064 hybrid system MOD 11,10: digits in, one check
// digit out.
func mod11x10[T text](p T) (int, bool) {
	c := uint8(10)
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		c = mod11x10Next[c][d]
	}
	return (11 - int(c)) % 10, true
}

// mod37x2 is ISO 7064 MOD 37-2: digits and upper-case letters in (A = 10 ...
// Z = 35), one check character out of 0-9, A-Z and * (value 36).
func mod37x2[T text](p T) (int, bool) {
	var c uint64
	for i := 0; i < len(p); i++ {
		v := alnumValue[p[i]]
		if v < 0 {
			return 0, false
		}
		if c >= 1<<62 {
			c %= 37
		}
		c = 2*c + uint64(v)
	}
	return int((38 - 2*c%37) % 37), true
}

// mod97x10 is ISO 7064 MOD 97-10: digits and upper-case letters in, a letter
// standing for the two digits of its value (A = 10 ... Z = 35) as in IBAN;
// two check digits out, 02 to 98, that make the whole number, read as
// decimal, come to 1 mod 97.
func mod97x10[T text](p T) (int, bool) {
	var r uint64
	for i := 0; i < len(p); i++ {
		v := alnumValue[p[i]]
		if v < 0 {
			return 0, false
		}
		if r >= 1<<56 {
			r %= 97
		}
		if v < 10 {
			r = r*10 + uint64(v)
		} else {
			r = r*100 + uint64(v)
		}
	}
	return int(98 - r%97*100%97), true
}
