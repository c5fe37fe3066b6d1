package checksum

import "testing"

// TestVerhoeffTables checks the tables against their definitions: the
// permutations are successive powers of the second row, and every element
// times its inverse is the identity.
func TestVerhoeffTables(t *testing.T) {
	for i := 1; i < len(verhoeffPerm); i++ {
		for j := range 10 {
			if got, want := verhoeffPerm[i][j], verhoeffPerm[i-1][verhoeffPerm[1][j]]; got != want {
				t.Errorf("verhoeffPerm[%d][%d] = %d, want %d", i, j, got, want)
			}
		}
	}
	for i := range 10 {
		if got := verhoeffMul[i][verhoeffInv[i]]; got != 0 {
			t.Errorf("%d * inv(%d) = %d, want 0", i, i, got)
		}
	}
}

// TestDammTable checks that the table is a quasigroup (each row and column a
// permutation) with a zero diagonal that is weakly totally anti-symmetric:
// (c*x)*y == (c*y)*x only when x == y.
func TestDammTable(t *testing.T) {
	for i := range 10 {
		var row, col [10]bool
		for j := range 10 {
			row[dammTable[i][j]] = true
			col[dammTable[j][i]] = true
		}
		for v := range 10 {
			if !row[v] || !col[v] {
				t.Errorf("row or column %d lacks %d", i, v)
			}
		}
		if dammTable[i][i] != 0 {
			t.Errorf("dammTable[%d][%d] = %d, want 0", i, i, dammTable[i][i])
		}
	}
	for c := range 10 {
		for x := range 10 {
			for y := range 10 {
				if x != y && dammTable[dammTable[c][x]][y] == dammTable[dammTable[c][y]][x] {
					t.Errorf("(%d*%d)*%d == (%d*%d)*%d", c, x, y, c, y, x)
				}
			}
		}
	}
}
