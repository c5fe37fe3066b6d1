package expression

import (
	"fmt"
	"math"
	"testing"
)

func TestAppendInt(t *testing.T) {
	for _, n := range []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345678, 99999999, 100000000, math.MaxInt64} {
		for _, w := range []int{0, 1, 2, 5, 8, 19} {
			want := fmt.Sprintf("x%0*d", w, n)
			if got := string(appendInt([]byte("x"), n, w)); got != want {
				t.Errorf("appendInt(%d, %d) = %q, want %q", n, w, got, want)
			}
		}
	}
}
