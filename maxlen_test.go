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

// maxlen= counts characters, as a person and a database column do: a
// customer MÜLLER (7 bytes) fits maxlen=6, and reads back; seven
// characters are refused, before anything is drawn, saying so.
func TestMaxLenCountsCharacters(t *testing.T) {
	g := sn.MustNew(`INV-@<name, maxlen=6>-@<seq, width=4>`, sn.WithSequence("seq", sequence.NewMemory()))
	for _, name := range []string{"MÜLLER", "ÅSTRÖM", "ŁÓDŹ", "東京", "ACME"} {
		nums, err := g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"name": name}})
		if err != nil {
			t.Errorf("%s (%d bytes): %v", name, len(name), err)
			continue
		}
		p, err := g.Parse(nums[0])
		if err != nil || p.Vars["name"] != name {
			t.Errorf("%s read back: %+v %v", nums[0], p, err)
		}
	}
	_, err := g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"name": "MÜLLERS"}})
	if !errors.Is(err, sn.ErrVarInvalid) || !strings.Contains(err.Error(), "7 characters long, more than maxlen=6") {
		t.Errorf("seven characters: %v", err)
	}
	if err := g.Validate("INV-MÜLLERS-0001"); !errors.Is(err, sn.ErrInvalidNumber) {
		t.Errorf("Validate of seven characters: %v", err)
	}
}

// TestMaxLenBruteForce searches small templates of literals (one of them
// two bytes long), a variable of maxlen=1 or 2 and a sequence for two
// inputs that print one string: every value of up to three characters of
// one, two and three bytes, numbers 1 to 25. The control: the same
// strings rendered by hand for @<a, maxlen=2>@<seq>, which New refuses.
func TestMaxLenBruteForce(t *testing.T) {
	pieces := []string{"-", "Ü", "1", "@<a, maxlen=1>", "@<a, maxlen=2>", "@<seq>", "@<seq, width=2>"}
	alphabet := []string{"", "A", "Ü", "€", "1", "-"}
	var values []string
	for _, x := range alphabet {
		for _, y := range alphabet {
			for _, z := range alphabet {
				if v := x + y + z; v != "" && !slices.Contains(values, v) {
					values = append(values, v)
				}
			}
		}
	}
	templates, accepted, strs, repeated, wide := 0, 0, 0, 0, 0
	var rec func(parts []string, n int)
	rec = func(parts []string, n int) {
		if n == 0 {
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
				if len(v) > strings.Count(tpl, "maxlen=2")+1 {
					wide++ // more bytes than maxlen: taken as characters
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
	for n := 2; n <= 4; n++ {
		rec(nil, n)
	}
	t.Logf("%d templates, %d accepted by New, %d strings rendered (%d values longer in bytes than maxlen): %d printed by two inputs", templates, accepted, strs, wide, repeated)
	if accepted < 50 || wide == 0 {
		t.Errorf("%d templates accepted, %d values of more bytes than characters: the search reads too little", accepted, wide)
	}
	seen, repeats := map[string]bool{}, 0
	for _, v := range values {
		if n := len([]rune(v)); n > 2 {
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
	if repeats == 0 {
		t.Error("the control repeats nothing: the search cannot see a repeat")
	}
	t.Logf("the control, @<a, maxlen=2>@<seq> without the proof: %d strings printed by two inputs", repeats)
}
