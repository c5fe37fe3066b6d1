package checksum

// luhnDoubled maps a digit d to the digit sum of 2d.
var luhnDoubled = [10]int{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}

// luhn is the Luhn (mod 10, "double add double") check digit of ISO/IEC
// 7812-1: starting from the rightmost payload digit, every second digit is
// doubled and its digit sum taken; the check digit brings the total to a
// multiple of 10.
func luhn[T text](p T) (int, bool) {
	sum := 0
	double := len(p)%2 == 1 // the rightmost payload digit is doubled
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		if double {
			sum += luhnDoubled[d]
		} else {
			sum += int(d)
		}
		double = !double
	}
	return (10 - sum%10) % 10, true
}
