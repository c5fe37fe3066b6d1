package checksum

// jd is the check digit of JD.com's order-number service (the
// CheckSumExpression of the seed article): for the sequence value n,
// n*9 % 31 % 10. The payload is n in decimal, leading zeros allowed. n is
// reduced mod 31 whenever another digit could overflow, so any length works
// and the result equals the article's formula wherever n*9 fits in an int64
// (every payload of up to 18 digits).
func jd[T text](p T) (int, bool) {
	var r uint64
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		if r >= 1<<59 {
			r %= 31
		}
		r = r*10 + uint64(d)
	}
	return int(r % 31 * 9 % 31 % 10), true
}
