package sn_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// TestNarrowVarsBruteForce searches small templates built from literals, a
// variable and a sequence for two inputs that print one string. Every
// template New accepts (under the narrow rule for variables without
// chars=) is rendered for every value of up to two characters over the
// template's literal characters and a letter and a digit, and numbers 1 to
// 25: no string may come from two (value, number) pairs. The control
// renders a template New refuses, by hand, and finds repeats.
func TestNarrowVarsBruteForce(t *testing.T) {
	pieces := []string{"-", "X", "1", "@<a>", "@<seq>", "@<seq, width=2>"}
	alphabet := []string{"", "A", "X", "1", "-", "7"}
	var values []string
	for _, x := range alphabet {
		for _, y := range alphabet {
			if v := x + y; v != "" && !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
	}
	templates, accepted, strs, repeated := 0, 0, 0, 0
	var rec func(parts []string, n int)
	rec = func(parts []string, n int) {
		if n == 0 {
			tpl := strings.Join(parts, "")
			if strings.Count(tpl, "@<seq") != 1 || strings.Count(tpl, "@<a>") != 1 {
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
			return
		}
		for _, p := range pieces {
			rec(append(parts[:len(parts):len(parts)], p), n-1)
		}
	}
	for n := 2; n <= 5; n++ {
		rec(nil, n)
	}
	t.Logf("%d templates, %d accepted by New, %d strings rendered: %d printed by two inputs", templates, accepted, strs, repeated)
	if accepted < 50 {
		t.Errorf("only %d templates accepted: the search reads too little", accepted)
	}
	// The control: @<a>@<seq> rendered by hand, as a template without the
	// proof would print it, gives one string for two inputs.
	seen, repeats := map[string]bool{}, 0
	for _, v := range values {
		for s := 1; s <= 25; s++ {
			out := v + strconv.Itoa(s)
			if seen[out] {
				repeats++
			}
			seen[out] = true
		}
	}
	if repeats == 0 {
		t.Error("the control repeats nothing: the search cannot see a repeat")
	}
	t.Logf("the control, @<a>@<seq> without the proof: %d strings printed by two inputs", repeats)
}
