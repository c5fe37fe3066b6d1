package sn_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// A Generator made with CheckOnly checks, parses and explains numbers with
// no sequence given, and refuses to issue; without it, New refuses the
// template as before. The proof is the same: an ambiguous template is
// refused under CheckOnly too.
func TestCheckOnly(t *testing.T) {
	const tpl = "INV/@<date, format=yyyy>/@<seq, width=5, reset=year>-@<checksum, algo=luhn>"
	if _, err := sn.New(tpl); err == nil {
		t.Fatal("New without a sequence or CheckOnly: no error")
	}
	at := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	issuer := sn.MustNew(tpl, sn.WithSequence("seq", sequence.NewMemory()))
	nums, err := issuer.Issue(t.Context(), sn.Request{N: 42, At: at})
	if err != nil {
		t.Fatal(err)
	}
	number := nums[41]

	g, err := sn.New(tpl, sn.CheckOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(number); err != nil {
		t.Errorf("Validate(%q): %v", number, err)
	}
	bad := number[:len(number)-1] + string('0'+(number[len(number)-1]-'0'+1)%10)
	if err := g.Validate(bad); !errors.Is(err, sn.ErrInvalidNumber) {
		t.Errorf("Validate(%q), a wrong check digit: %v", bad, err)
	}
	if p, err := g.Parse(number); err != nil || p.Seq != 42 {
		t.Errorf("Parse(%q) = %+v, %v; want 42", number, p, err)
	}
	if _, err := g.Next(t.Context()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Next of a CheckOnly Generator: %v, want errors.ErrUnsupported", err)
	}
	if _, err := sn.New("@<area>@<seq>", sn.CheckOnly()); !errors.Is(err, sn.ErrAmbiguous) {
		t.Errorf("an ambiguous template under CheckOnly: %v, want ErrAmbiguous", err)
	}
	// A variable stays a variable.
	if _, err := sn.New("T-@<ticket>", sn.CheckOnly()); err == nil {
		t.Error("a template whose only part is a variable: no error (it has no sequence part)")
	}
}
