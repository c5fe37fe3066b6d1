package sn_test

import (
	"errors"
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
	values := valuesOf([]string{"A", "Ü", "€", "1", "-"}, 3)
	wide := 0
	templates, accepted, strs, repeated := bruteForce(t, []string{"-", "Ü", "1", "@<a, maxlen=1>", "@<a, maxlen=2>", "@<seq>", "@<seq, width=2>"}, values, 4, func(tpl, v string) {
		if strings.Contains(tpl, "maxlen=1") && len(v) > 1 || len(v) > 2 {
			wide++ // more bytes than maxlen: taken, as characters
		}
	})
	t.Logf("%d templates, %d accepted by New, %d strings rendered (%d values of more bytes than maxlen): %d printed by two inputs", templates, accepted, strs, wide, repeated)
	if accepted < 50 || wide == 0 {
		t.Errorf("%d templates accepted, %d values of more bytes than maxlen: the search reads too little", accepted, wide)
	}
	repeats := unproven(values, 2)
	if repeats == 0 {
		t.Error("the control repeats nothing: the search cannot see a repeat")
	}
	t.Logf("the control, @<a, maxlen=2>@<seq> without the proof: %d strings printed by two inputs", repeats)
}
