package checksum

// gs1 is the GS1 mod 10 check digit of GTIN-8, GTIN-12 (UPC-A), GTIN-13
// (EAN), GTIN-14, GLN and SSCC: the payload digits are weighted 3, 1, 3, ...
// from the rightmost one, and the check digit brings the weighted sum to a
// multiple of 10.
func gs1[T text](p T) (int, bool) {
	sum := 0
	three := len(p)%2 == 1 // the rightmost payload digit weighs 3
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		if three {
			sum += 3 * int(d)
		} else {
			sum += int(d)
		}
		three = !three
	}
	return (10 - sum%10) % 10, true
}

// s10Weights are the UPU S10 weights of the 8 serial-number digits, left to
// right.
var s10Weights = [8]int{8, 6, 4, 2, 3, 5, 9, 7}

// s10 is the check digit of a UPU S10 postal item identifier such as
// RR 00000001 4 CN: C = 11 - (weighted sum mod 11), with 10 written as 0 and
// 11 as 5. The caller has checked that p has exactly 8 bytes.
func s10[T text](p T) (int, bool) {
	if len(p) != len(s10Weights) {
		return 0, false
	}
	sum := 0
	for i, w := range s10Weights {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		sum += w * int(d)
	}
	switch c := 11 - sum%11; c {
	case 10:
		return 0, true
	case 11:
		return 5, true
	default:
		return c, true
	}
}
