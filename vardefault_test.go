package sn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// A variable without chars= keeps out only the literal text right after
// it when the proof allows: "INV-@<company>-..." takes INITECH, NOVA and
// VINCI, letters of "INV-", which it refused at their first invoice. When
// the proof needs more, the template is refused at New with the chars= to
// write, rather than one customer at the first number.
func TestVarDefaultChars(t *testing.T) {
	g, err := sn.New("INV-@<company>-@<seq, width=6>", sn.WithSequence("seq", sequence.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"ACME", "INITECH", "NOVA", "VINCI"} {
		nums, err := g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"company": c}})
		if err != nil {
			t.Errorf("company %s: %v", c, err)
			continue
		}
		if p, err := g.Parse(nums[0]); err != nil || p.Vars["company"] != c {
			t.Errorf("Parse(%q) = %+v, %v", nums[0], p, err)
		}
	}
	if _, err := g.Issue(t.Context(), sn.Request{Vars: sn.Vars{"company": "A-B"}}); !errors.Is(err, sn.ErrVarInvalid) {
		t.Errorf("company A-B, which holds the text after it: %v", err)
	}
	_, err = sn.New("@<seq>1@<code>", sn.WithSequence("seq", sequence.NewMemory()))
	if !errors.Is(err, sn.ErrTemplate) || !strings.Contains(err.Error(), "variable code: the template is proven only if code keeps out the characters 1 of its literal text") || !strings.Contains(err.Error(), "chars=^1") {
		t.Errorf("a variable that must keep out a digit of the text before it: %v", err)
	}
	if _, err := sn.New("@<seq>1@<code, chars=^1>", sn.WithSequence("seq", sequence.NewMemory())); err != nil {
		t.Errorf("with the chars= the refusal gives: %v", err)
	}
}
