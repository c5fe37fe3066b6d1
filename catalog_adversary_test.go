package sn_test

import (
	"context"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// Found by an adversarial review, now fixed: two templates that share a counter through ownerKey, one printing
// the counter in another radix (or obfuscated), are both accepted by the
// catalog (and by CheckSet): the proof compares readings part by part when
// the signatures are equal, and the signature leaves out radix=/alphabet=
// and obfuscate=. Equal text then is not one number: "SN-0010" is 16 of
// the counter "SN" in one template and 10 of the same counter in the
// other.
func TestAdversaryCatalogOwnerKeyRadix(t *testing.T) {
	advCatalogPair(t,
		"@<ownerKey, value=SN>-@<seq, width=4>",
		"@<ownerKey, value=SN>-@<seq, width=4, radix=16>", nil)
}

func TestAdversaryCatalogOwnerKeyObfuscate(t *testing.T) {
	advCatalogPair(t,
		"@<ownerKey, value=SN>-@<seq, width=4>",
		"@<ownerKey, value=SN>-@<seq, width=4, obfuscate=k>",
		[]sn.Option{sn.WithObfuscation("k", []byte("0123456789abcdef0123456789abcdef"))})
}

func advCatalogPair(t *testing.T, a, b string, bopts []sn.Option) {
	ctx := context.Background()
	store := sequence.NewMemory()
	ga, err := sn.New(a, sn.WithSequence("seq", store))
	if err != nil {
		t.Fatal(err)
	}
	gb, err := sn.New(b, append([]sn.Option{sn.WithSequence("seq", store)}, bopts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ga.Enroll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := gb.Enroll(ctx); err != nil {
		t.Logf("refused, as it should be: %v", err)
		return
	}
	t.Logf("the catalog accepted %q after %q", b, a)
	if err := sn.CheckSet([]sn.Member{{Name: "a", Gen: ga, Store: "s"}, {Name: "b", Gen: gb, Store: "s"}}); err == nil {
		t.Logf("CheckSet accepts them too")
	}
	seen := map[string]string{}
	repeats := 0
	for i := range 3000 {
		g, name := ga, "a"
		if i/50%2 == 1 {
			g, name = gb, "b"
		}
		s, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[s]; ok {
			if repeats == 0 {
				t.Errorf("%q printed by %s and again by %s", s, prev, name)
			}
			repeats++
		}
		seen[s] = name
	}
	if repeats > 0 {
		t.Errorf("%d repeats in 3000 numbers", repeats)
	}
}
