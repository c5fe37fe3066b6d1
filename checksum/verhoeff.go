package checksum

// verhoeffMul is the multiplication table of the dihedral group D5.
var verhoeffMul = [10][10]uint8{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
	{1, 2, 3, 4, 0, 6, 7, 8, 9, 5},
	{2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
	{3, 4, 0, 1, 2, 8, 9, 5, 6, 7},
	{4, 0, 1, 2, 3, 9, 5, 6, 7, 8},
	{5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
	{6, 5, 9, 8, 7, 1, 0, 4, 3, 2},
	{7, 6, 5, 9, 8, 2, 1, 0, 4, 3},
	{8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
	{9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
}

// verhoeffPerm[i] is the permutation applied to a digit i places (mod 8)
// from the right, the check digit being place 0: the i-th power of
// (1 5 7 6 2 8 3 0 9 4).
var verhoeffPerm = [8][10]uint8{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
	{1, 5, 7, 6, 2, 8, 3, 0, 9, 4},
	{5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
	{8, 9, 1, 6, 0, 4, 3, 5, 2, 7},
	{9, 4, 5, 3, 1, 2, 6, 8, 7, 0},
	{4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
	{2, 7, 9, 3, 8, 0, 6, 4, 1, 5},
	{7, 0, 4, 6, 9, 1, 3, 2, 5, 8},
}

// verhoeffInv maps an element of D5 to its inverse.
var verhoeffInv = [10]uint8{0, 4, 3, 2, 1, 5, 6, 7, 8, 9}

// verhoeff is the Verhoeff check digit, which detects every single-digit
// error and every transposition of adjacent digits.
func verhoeff[T text](p T) (int, bool) {
	var c uint8
	for i := len(p) - 1; i >= 0; i-- {
		d := p[i] - '0'
		if d > 9 {
			return 0, false
		}
		c = verhoeffMul[c][verhoeffPerm[(len(p)-i)%8][d]]
	}
	return int(verhoeffInv[c]), true
}
