package lang

import "testing"

func TestScratch(t *testing.T) {
	c := Chain{{Repeat(Digits, 0, 2), false}}
	for _, tc := range []struct{ a, b Chain; div bool; max int }{
		{c, c, false, 1}, {c, Chain{{Literal(""), false}}, true, 2}, {Chain{{Literal(""), false}}, Chain{{Literal("x"), false}}, true, 5},
		{Chain{{Repeat(Digits, 0, 2), false}, {Repeat(Digits, 1, 1), true}}, Chain{{Repeat(Digits, 0, 2), false}, {Repeat(Digits, 1, 1), true}}, false, 5},
	} {
		func() {
			defer func() { if r := recover(); r != nil { t.Logf("panic: %v", r) } }()
			ws, err := Ambiguous(tc.a, tc.b, tc.div, tc.max, 1, 1000)
			t.Logf("%v %v", ws, err)
		}()
	}
}
