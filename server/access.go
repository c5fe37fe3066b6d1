package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// An Action is what a [Token] may do with the templates it reaches.
type Action string

// The actions, each a set of routes:
const (
	// Issue draws numbers: POST next and blocks, and GET the template
	// (a client renders blocks from it).
	Issue Action = "issue"
	// Read reads templates and numbers, drawing nothing: GET the
	// templates, POST preview, validate and parse.
	Read Action = "read"
	// Monitor reads the service's figures for the templates the token
	// reaches: GET /v1/monitor and /metrics.
	Monitor Action = "monitor"
	// Admin changes the record: POST void.
	Admin Action = "admin"
)

// Actions are every Action, in the order a scope is written.
var Actions = []Action{Issue, Read, Monitor, Admin}

// AnyTenant, as a Token's Tenant, reaches the templates of every tenant:
// a platform team's token.
const AnyTenant = "*"

// A Token is a bearer token and its scope: the templates it reaches and
// what it may do with them. A request with it is refused, with 403
// forbidden, an action its scope does not give; a template of another
// tenant is not found (404), as if it did not exist.
type Token struct {
	// ID names the token in logs, in the journal (who voided a number)
	// and in refusals, never its secret: "storefront", "billing-ci".
	ID string
	// Secret is what the client sends (Authorization: Bearer SECRET), at
	// least 16 bytes. The Server keeps only its SHA-256.
	Secret string
	// Tenant is the tenant whose templates the token reaches (see
	// config.Template.Tenant): "" for the templates of no tenant,
	// [AnyTenant] for every template.
	Tenant string
	// Templates are names or patterns (path.Match: "order-*",
	// "inv.[a-c]") of the templates the token reaches among its tenant's;
	// none means all of them.
	Templates []string
	// Actions are what the token may do; at least one.
	Actions []Action
}

// DefaultTokenGrace is the default for [Options.TokenGrace].
const DefaultTokenGrace = 10 * time.Minute

// grant is a Token as the Server keeps it: its secret hashed.
type grant struct {
	id        string
	tenant    string
	templates []string
	actions   map[Action]bool
	until     time.Time // when a rotated-out token stops being accepted; zero: while it is listed
}

// all reports whether g reaches every template of its tenant.
func (g *grant) all() bool { return len(g.templates) == 0 }

// reaches reports whether g reaches the template name of tenant.
func (g *grant) reaches(name, tenant string) bool {
	if g.tenant != AnyTenant && g.tenant != tenant {
		return false
	}
	if g.all() {
		return true
	}
	for _, p := range g.templates {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// scope describes g's actions for a refusal: "issue, read".
func (g *grant) scope() string {
	var out []string
	for _, a := range Actions {
		if g.actions[a] {
			out = append(out, string(a))
		}
	}
	return strings.Join(out, ", ")
}

// open is the grant of a server without tokens: anyone on this machine
// may do everything.
var open = &grant{id: "", tenant: AnyTenant, actions: map[Action]bool{Issue: true, Read: true, Monitor: true, Admin: true}}

// checkToken checks t, the i-th token, and returns its grant.
func checkToken(i int, t Token) (*grant, error) {
	name := fmt.Sprintf("token %d", i+1)
	if t.ID != "" {
		name = fmt.Sprintf("token %q", t.ID)
	}
	switch {
	case t.ID == "":
		return nil, fmt.Errorf("server: %s: no ID: name it (storefront, billing-ci), for the logs and the journal", name)
	case strings.ContainsAny(t.ID, " \t\r\n=,") || len(t.ID) > 64:
		return nil, fmt.Errorf("server: %s: want an ID of at most 64 characters without spaces, commas or =", name)
	case len(t.Secret) < 16:
		return nil, fmt.Errorf("server: %s: its secret is %d bytes long; want at least 16 (a random one: openssl rand -hex 32)", name, len(t.Secret))
	case len(t.Actions) == 0:
		return nil, fmt.Errorf("server: %s: no actions: give it one or more of issue, read, monitor, admin", name)
	}
	g := &grant{id: t.ID, tenant: t.Tenant, actions: map[Action]bool{}}
	for _, a := range t.Actions {
		if !slices.Contains(Actions, a) {
			return nil, fmt.Errorf("server: %s: action %q: want issue, read, monitor or admin", name, a)
		}
		g.actions[a] = true
	}
	for _, p := range t.Templates {
		if p == "*" {
			g.templates = nil // every template
			break
		}
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return nil, fmt.Errorf("server: %s: template pattern %q: want a name or a pattern such as order-*", name, p)
		}
		g.templates = append(g.templates, p)
	}
	return g, nil
}

// access holds the Server's tokens, by the SHA-256 of their secrets.
type access struct {
	mu     sync.RWMutex
	grants map[[sha256.Size]byte]*grant // nil: no tokens, no authentication
	grace  time.Duration
	now    func() time.Time
}

// set replaces the tokens with ts: a token listed before and not now is
// accepted for the grace period still, with the scope it had.
func (a *access) set(ts []Token) error {
	next := make(map[[sha256.Size]byte]*grant, len(ts))
	for i, t := range ts {
		g, err := checkToken(i, t)
		if err != nil {
			return err
		}
		h := sha256.Sum256([]byte(t.Secret))
		if _, dup := next[h]; dup {
			return fmt.Errorf("server: token %q: its secret is another token's too", t.ID)
		}
		next[h] = g
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for h, g := range a.grants {
		if _, kept := next[h]; kept || (!g.until.IsZero() && !now.Before(g.until)) {
			continue
		}
		// Taken out now, or earlier and still in its grace: accepted
		// until the grace of now ends, never longer than before.
		old := *g
		if end := now.Add(a.grace); old.until.IsZero() || end.Before(old.until) {
			old.until = end
		}
		if now.Before(old.until) {
			next[h] = &old
		}
	}
	if a.grants == nil && len(ts) == 0 {
		next = nil // still no authentication
	}
	a.grants = next
	return nil
}

// lookup returns the grant of the request's bearer token, or nil.
func (a *access) lookup(r *http.Request) *grant {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.grants == nil {
		return open
	}
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // schemes are case-insensitive (RFC 9110)
		return nil
	}
	// The secret's hash is looked up: how long that takes tells nothing
	// of any secret.
	g := a.grants[sha256.Sum256([]byte(strings.TrimLeft(got, " ")))]
	if g != nil && !g.until.IsZero() && !a.now().Before(g.until) {
		return nil // rotated out, and its grace is over
	}
	return g
}

// tokenless reports whether the Server has no tokens.
func (a *access) tokenless() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.grants == nil
}

// Rotate replaces the Server's tokens with tokens, checked as [New]
// checks them, while it serves: a token no longer listed is still
// accepted, with its scope, for grace, so that clients move to its
// successor without a failed request; a token already in its grace keeps
// the shorter of its grace and the new one. A grace of 0 refuses the
// tokens taken out at once (a leaked secret). A Server started without
// tokens cannot be given some, nor the reverse: that changes who may
// reach it, which needs a restart. sn serve calls Rotate on SIGHUP, with
// its tokens and serve.token_grace read again.
func (s *Server) Rotate(tokens []Token, grace time.Duration) error {
	if s.access.tokenless() != (len(tokens) == 0) {
		return errors.New("server: Rotate: a Server without tokens stays without, and one with tokens keeps some: restart it to change that")
	}
	if grace < 0 {
		return fmt.Errorf("server: Rotate: grace %v: want 0 or more", grace)
	}
	s.access.mu.Lock()
	s.access.grace = grace
	s.access.mu.Unlock()
	return s.access.set(tokens)
}
