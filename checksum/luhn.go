package checksum

// luhnDoubled maps a digit d (as a byte value 0-9) to the digit sum of 2d.
// It has 256 entries so that indexing by any byte needs no bounds check.
var luhnDoubled = [256]uint8{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}

// luhn is the Luhn (mod 10, "double add double") check digit of ISO/IEC
// 7812-1: starting from the rightmost payload digit, every second digit is
// doubled and its digit sum taken; the check digit brings the total to a
// multiple of 10.
func luhn[T text](p T) (int, bool) {
	// Two digits per step from the right: the rightmost payload digit and
	// every second one before it are doubled.
	sum := 0
	i := len(p) - 1
	for ; i >= 1; i -= 2 {
		d, e := p[i]-'0', p[i-1]-'0'
		if d > 9 || e > 9 {
			return 0, false
		}
		sum += int(luhnDoubled[d]) + int(e)
	}
	if i == 0 {
		d := p[0] - '0'
		if d > 9 {
			return 0, false
		}
		sum += int(luhnDoubled[d])
	}
	return (10 - sum%10) % 10, true
}
