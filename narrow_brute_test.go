package sn_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// valuesOf returns every string of 1 to n of the alphabet's pieces, each
// once.
func valuesOf(alphabet []string, n int) []string {
	var values []string
	last := []string{""}
	for range n {
		var next []string
		for _, v := range last {
			for _, a := range alphabet {
				if w := v + a; !slices.Contains(values, w) {
					values = append(values, w)
					next = append(next, w)
				}
			}
		}
		last = next
	}
	return values
}

// bruteForce builds every template of 2 to maxParts pieces that holds one
// sequence (a piece starting "@<seq") and one variable a (a piece
// starting "@<a"), and renders each that New accepts for every value and
// the numbers 1 to 25: a string printed for two (value, number) inputs is
// an error. Values the template refuses (ErrVarInvalid) are skipped;
// rendered(tpl, v) sees each value rendered. It returns how many
// templates it built, how many New accepted, how many strings it rendered
// and how many of them two inputs printed.
func bruteForce(t *testing.T, pieces, values []string, maxParts int, rendered func(tpl, v string)) (templates, accepted, strs, repeated int) {
	var rec func(parts []string, n int)
	rec = func(parts []string, n int) {
		if n > 0 {
			for _, p := range pieces {
				rec(append(parts[:len(parts):len(parts)], p), n-1)
			}
			return
		}
		tpl := strings.Join(parts, "")
		if strings.Count(tpl, "@<seq") != 1 || strings.Count(tpl, "@<a") != 1 {
			return
		}
		templates++
		g, err := sn.New(tpl, sn.WithSequence("seq", sequence.NewMemory()))
		if err != nil {
			return
		}
		accepted++
		seen := map[string]string{}
		for _, v := range values {
			outs, err := g.Preview(t.Context(), sn.Request{N: 25, Vars: sn.Vars{"a": v}})
			if errors.Is(err, sn.ErrVarInvalid) {
				continue
			}
			if err != nil {
				t.Fatalf("%s with a=%q: %v", tpl, v, err)
			}
			if rendered != nil {
				rendered(tpl, v)
			}
			for i, out := range outs {
				strs++
				in := "a=" + strconv.Quote(v) + " seq=" + strconv.Itoa(i+1)
				if prev, dup := seen[out]; dup {
					repeated++
					t.Errorf("%s prints %q for %s and for %s", tpl, out, prev, in)
				}
				seen[out] = in
			}
		}
	}
	for n := 2; n <= maxParts; n++ {
		rec(nil, n)
	}
	return templates, accepted, strs, repeated
}

// unproven renders @<a>@<seq> by hand, as a template without the proof
// would print it, for values of at most maxChars characters and numbers 1
// to 25, and returns how many strings two inputs printed.
func unproven(values []string, maxChars int) int {
	seen, repeats := map[string]bool{}, 0
	for _, v := range values {
		if utf8.RuneCountInString(v) > maxChars {
			continue
		}
		for s := 1; s <= 25; s++ {
			out := v + strconv.Itoa(s)
			if seen[out] {
				repeats++
			}
			seen[out] = true
		}
	}
	return repeats
}

// TestNarrowVarsBruteForce searches small templates built from literals, a
// variable and a sequence for two inputs that print one string. Every
// template New accepts (under the narrow rule for variables without
// chars=) is rendered for every value of up to two characters over the
// template's literal characters and a letter and a digit, and numbers 1 to
// 25: no string may come from two (value, number) pairs. The control
// renders a template New refuses, by hand, and finds repeats.
func TestNarrowVarsBruteForce(t *testing.T) {
	values := valuesOf([]string{"A", "X", "1", "-", "7"}, 2)
	templates, accepted, strs, repeated := bruteForce(t, []string{"-", "X", "1", "@<a>", "@<seq>", "@<seq, width=2>"}, values, 5, nil)
	t.Logf("%d templates, %d accepted by New, %d strings rendered: %d printed by two inputs", templates, accepted, strs, repeated)
	if accepted < 50 {
		t.Errorf("only %d templates accepted: the search reads too little", accepted)
	}
	repeats := unproven(values, 2)
	if repeats == 0 {
		t.Error("the control repeats nothing: the search cannot see a repeat")
	}
	t.Logf("the control, @<a>@<seq> without the proof: %d strings printed by two inputs", repeats)
}
