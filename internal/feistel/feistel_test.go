package feistel

import (
	"math/rand/v2"
	"testing"
)

var testKey = []byte("0123456789abcdef-a test key")

// pow10 returns 10^w.
func pow10(w int) uint64 {
	n := uint64(1)
	for range w {
		n *= 10
	}
	return n
}

// For the widths sn prints, 1 to 18 digits, the permutation of the
// numbers of w digits is a bijection: every number has one image, in
// range, and Invert undoes Apply. Up to 6 digits every number is checked;
// above, 20,000 numbers at random and at both ends.
func TestBijection(t *testing.T) {
	checked := 0
	for w := 1; w <= 18; w++ {
		n := pow10(w)
		p, err := New(testKey, n)
		if err != nil {
			t.Fatal(err)
		}
		if w <= 6 {
			seen := make([]bool, n)
			for x := range n {
				y := p.Apply(x)
				if y >= n {
					t.Fatalf("w=%d: Apply(%d) = %d, out of range", w, x, y)
				}
				if seen[y] {
					t.Fatalf("w=%d: %d is the image of two numbers", w, y)
				}
				seen[y] = true
				if back := p.Invert(y); back != x {
					t.Fatalf("w=%d: Invert(Apply(%d)) = %d", w, x, back)
				}
				checked++
			}
			continue
		}
		r := rand.New(rand.NewPCG(uint64(w), 1))
		images := map[uint64]uint64{}
		for i := range 20000 {
			x := r.Uint64N(n)
			switch i {
			case 0:
				x = 0
			case 1:
				x = n - 1
			}
			y := p.Apply(x)
			if y >= n {
				t.Fatalf("w=%d: Apply(%d) = %d, out of range", w, x, y)
			}
			if other, ok := images[y]; ok && other != x {
				t.Fatalf("w=%d: %d and %d have one image %d", w, x, other, y)
			}
			images[y] = x
			if back := p.Invert(y); back != x {
				t.Fatalf("w=%d: Invert(Apply(%d)) = %d", w, x, back)
			}
			checked++
		}
	}
	t.Logf("%d numbers checked over widths 1-18", checked)
}

// Consecutive numbers do not give consecutive images, and another key
// gives another permutation.
func TestScatters(t *testing.T) {
	p, _ := New(testKey, pow10(8))
	q, _ := New([]byte("another key, also long enough"), pow10(8))
	near, same := 0, 0
	for x := uint64(1); x <= 1000; x++ {
		a, b := p.Apply(x), p.Apply(x+1)
		if a+1 == b || b+1 == a {
			near++
		}
		if p.Apply(x) == q.Apply(x) {
			same++
		}
	}
	if near > 2 || same > 2 {
		t.Errorf("%d consecutive images, %d equal under two keys, of 1000", near, same)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New([]byte("short"), 100); err == nil {
		t.Error("a 5-byte key was accepted")
	}
	if _, err := New(testKey, 1); err == nil {
		t.Error("a domain of 1 was accepted")
	}
}

func FuzzPerm(f *testing.F) {
	f.Add(uint8(8), uint64(12345), []byte("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, w uint8, x uint64, key []byte) {
		n := pow10(1 + int(w)%18)
		if len(key) < MinKeyLen {
			return
		}
		p, err := New(key, n)
		if err != nil {
			t.Fatal(err)
		}
		x %= n
		y := p.Apply(x)
		if y >= n || p.Invert(y) != x {
			t.Fatalf("n=%d: Apply(%d) = %d, Invert = %d", n, x, y, p.Invert(y))
		}
	})
}

func BenchmarkApply(b *testing.B) {
	p, _ := New(testKey, pow10(8))
	var s uint64
	for i := range b.N {
		s += p.Apply(uint64(i) % pow10(8))
	}
	_ = s
}

func TestApplyAllocs(t *testing.T) {
	p, _ := New(testKey, pow10(8))
	if n := testing.AllocsPerRun(1000, func() { p.Invert(p.Apply(12345678)) }); n != 0 {
		t.Errorf("Apply and Invert allocate %v times", n)
	}
}
