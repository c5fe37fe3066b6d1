package server

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A token taken out by Rotate is accepted, with its scope, for the grace
// period, and refused after it; the new one at once; a token that stays
// never expires.
func TestRotateGrace(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a := access{grace: time.Minute, now: func() time.Time { return now }}
	old := Token{ID: "shop", Secret: "old-secret-0123456789", Tenant: "shop", Actions: []Action{Issue}}
	kept := Token{ID: "ops", Secret: "ops-secret-0123456789", Tenant: AnyTenant, Actions: []Action{Monitor}}
	if err := a.set([]Token{old, kept}); err != nil {
		t.Fatal(err)
	}
	with := func(secret string) *grant {
		r := httptest.NewRequest("GET", "/v1/templates", nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		return a.lookup(r)
	}
	next := old
	next.Secret = "new-secret-0123456789"
	next.Actions = []Action{Issue, Read}
	if err := a.set([]Token{next, kept}); err != nil {
		t.Fatal(err)
	}
	if g := with(old.Secret); g == nil || g.actions[Read] || !g.actions[Issue] {
		t.Errorf("the old token within its grace: %+v; want its old scope", g)
	}
	if g := with(next.Secret); g == nil || !g.actions[Read] {
		t.Errorf("the new token: %+v", g)
	}
	// A second rotation within the grace does not extend it.
	now = now.Add(30 * time.Second)
	if err := a.set([]Token{next, kept}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	if g := with(old.Secret); g != nil {
		t.Errorf("the old token after its grace: %+v; want it refused", g)
	}
	if with(next.Secret) == nil || with(kept.Secret) == nil {
		t.Error("the new and the kept tokens must be accepted")
	}
	now = now.Add(24 * time.Hour)
	if with(kept.Secret) == nil {
		t.Error("a token that stays listed must not expire")
	}
	// The old token listed again is back for good.
	if err := a.set([]Token{old, next, kept}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour)
	if with(old.Secret) == nil {
		t.Error("a token listed again must be accepted")
	}
	// A rotation with a grace of 0 refuses at once a token taken out,
	// and one still in an earlier grace.
	if err := a.set([]Token{next, kept}); err != nil { // old taken out: a minute of grace
		t.Fatal(err)
	}
	if with(old.Secret) == nil {
		t.Fatal("the old token within its grace")
	}
	a.grace = 0
	if err := a.set([]Token{kept}); err != nil { // next taken out too, with no grace
		t.Fatal(err)
	}
	if with(old.Secret) != nil || with(next.Secret) != nil {
		t.Error("a grace of 0 must refuse the tokens taken out, and those in an earlier grace")
	}
	a.grace = time.Minute
	if err := a.set([]Token{old, next, kept}); err != nil {
		t.Fatal(err)
	}
	// Bad tokens are refused whole: nothing changes.
	for _, bad := range []Token{
		{ID: "", Secret: "x-secret-0123456789", Actions: []Action{Read}},
		{ID: "short", Secret: "short", Actions: []Action{Read}},
		{ID: "none", Secret: "none-secret-0123456789"},
		{ID: "typo", Secret: "typo-secret-0123456789", Actions: []Action{"isue"}},
		{ID: "pattern", Secret: "pattern-secret-0123456789", Actions: []Action{Read}, Templates: []string{"[a"}},
		{ID: "twin", Secret: old.Secret, Actions: []Action{Read}},
	} {
		if err := a.set([]Token{old, bad}); err == nil {
			t.Errorf("set(%+v): no error", bad)
		} else if !strings.Contains(err.Error(), "server: token") {
			t.Errorf("set(%+v): %v", bad, err)
		}
	}
	if with(next.Secret) == nil {
		t.Error("a refused set changed the tokens")
	}
}
