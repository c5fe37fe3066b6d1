package checksum

// dammTable is the weakly totally anti-symmetric quasigroup of order 10 from
// H. Michael Damm's thesis (2004), with zeros on the diagonal.
var dammTable = [10][10]uint8{
	{0, 3, 1, 7, 5, 9, 8, 6, 4, 2},
	{7, 0, 9, 2, 1, 5, 4, 8, 6, 3},
	{4, 2, 0, 6, 8, 7, 1, 3, 5, 9},
	{1, 7, 5, 0, 9, 8, 3, 4, 2, 6},
	{6, 1, 2, 3, 0, 4, 5, 9, 7, 8},
	{3, 6, 7, 4, 2, 0, 9, 5, 8, 1},
	{5, 8, 6, 9, 7, 2, 0, 1, 3, 4},
	{8, 9, 4, 5, 3, 6, 2, 0, 1, 7},
	{9, 4, 3, 8, 6, 1, 7, 2, 0, 5},
	{2, 5, 8, 1, 4, 3, 6, 7, 9, 0},
}

// damm is the Damm check digit, which detects every single-digit error and
// every transposition of adjacent digits.
func damm[T text](p T) (int, bool) {
	var c uint8
	for i := 0; i < len(p); i++ {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		c = dammTable[c][d]
	}
	return int(c), true
}
