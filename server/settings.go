package server

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/parser"
)

// Settings are sn serve's own settings, written in the serve section of
// its config file. Like the obfuscation keys, bearer tokens never go in
// the file: it names where they are. sn serve's flags override them.
type Settings struct {
	// Listen is the address to listen on, HOST:PORT. Without tokens it
	// must be a loopback address. Default: 127.0.0.1:8080.
	Listen string `yaml:"listen"`

	// TokensEnv is the environment variable that holds the bearer tokens,
	// separated by commas or white space, each at least 16 bytes.
	// Default: SN_TOKENS.
	TokensEnv string `yaml:"tokens_env"`

	// TokensFile is a file of bearer tokens, one per line (a line that
	// starts with "#" is a comment), relative to the config file's
	// directory: a mounted secret. Its tokens are added to TokensEnv's.
	TokensFile string `yaml:"tokens_file"`

	// TLSCert and TLSKey are the PEM files of the certificate and its
	// key, relative to the config file's directory: with them, sn serve
	// speaks HTTPS only.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`

	// MaxBody is the largest request body, in bytes. Default: 1 MiB.
	MaxBody int64 `yaml:"max_body"`

	// Tokens are the scoped tokens: each an ID and its scope, its
	// secret in TokensEnv or TokensFile written ID=SECRET (an ID may have
	// two secrets while clients move from one to the next). Without
	// Tokens, each secret there may do everything with the templates of
	// no tenant.
	Tokens []TokenScope `yaml:"tokens"`

	// TokenGrace is how long a token taken out of TokensFile (or out of
	// Tokens) is still accepted once sn serve has read them again, on
	// SIGHUP or when the file changes: a duration such as "10m"; "0s"
	// refuses it at once (a leaked secret). It is read again with them,
	// and shortens the grace of tokens taken out before. Default: 10m.
	TokenGrace string `yaml:"token_grace"`
}

// SettingsOf reads the serve section of cfg: each problem is a
// *config.Error with its line, joined.
func SettingsOf(cfg *config.Config) (Settings, error) {
	var s Settings
	if err := cfg.DecodeServe(&s); err != nil {
		return s, err
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		e := &config.Error{Field: "serve." + field, Err: fmt.Errorf("serve."+field+": "+format, a...)}
		cfg.Locate(e)
		errs = append(errs, e)
	}
	if s.Listen != "" {
		if _, port, err := net.SplitHostPort(s.Listen); err != nil || port == "" {
			bad("listen", "%q: want HOST:PORT, such as 127.0.0.1:8080", s.Listen)
		} else if _, err := net.LookupPort("tcp", port); err != nil {
			bad("listen", "%q: port %q is not a TCP port (0 to 65535, or a service name)", s.Listen, port)
		}
	}
	if s.TokensEnv != "" && !envName.MatchString(s.TokensEnv) {
		bad("tokens_env", "%q: want the name of an environment variable, such as SN_TOKENS", s.TokensEnv)
	}
	switch {
	case s.TLSCert != "" && s.TLSKey == "":
		bad("tls_cert", "tls_cert without tls_key: give both, or neither")
	case s.TLSCert == "" && s.TLSKey != "":
		bad("tls_key", "tls_key without tls_cert: give both, or neither")
	}
	if s.MaxBody < 0 {
		bad("max_body", "%d: want a positive size in bytes", s.MaxBody)
	}
	s.checkScopes(cfg, bad)
	return s, errors.Join(errs...)
}

// envName matches the name of an environment variable.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// TokenScope is one of [Settings.Tokens]: a token's ID and its scope, as
// [Token] has them, written in a config file:
//
//	serve:
//	  tokens:
//	    - id: storefront
//	      tenant: shop
//	      templates: [order, "order-*"]
//	      actions: [issue]
type TokenScope struct {
	ID        string   `yaml:"id"`
	Tenant    string   `yaml:"tenant"`
	Templates []string `yaml:"templates"`
	Actions   []string `yaml:"actions"`
}

// Grace returns TokenGrace as a duration, DefaultTokenGrace when unset.
func (s Settings) Grace() time.Duration {
	d, err := time.ParseDuration(s.TokenGrace)
	if err != nil || s.TokenGrace == "" || d < 0 {
		return DefaultTokenGrace
	}
	return d
}

// ScopedTokens pairs the scopes of s.Tokens with secrets, each
// "ID=SECRET" as TokensEnv and TokensFile hold them, and returns the
// tokens. Without s.Tokens each secret is a token that may do everything
// with the templates of no tenant, its ID its place in the list from 1.
func (s Settings) ScopedTokens(secrets []string) ([]Token, error) {
	if len(s.Tokens) == 0 {
		out := make([]Token, len(secrets))
		for i, sec := range secrets {
			out[i] = Token{ID: fmt.Sprint(i + 1), Secret: sec, Actions: Actions}
		}
		return out, nil
	}
	scopes := map[string]TokenScope{}
	for _, ts := range s.Tokens {
		scopes[ts.ID] = ts
	}
	ids := slices.Sorted(maps.Keys(scopes))
	var out []Token
	has := map[string]bool{}
	for i, sec := range secrets {
		id, secret, ok := strings.Cut(sec, "=")
		ts, known := scopes[id]
		switch {
		case !ok:
			return nil, fmt.Errorf("secret %d: want ID=SECRET, the ID one of serve.tokens (%s)", i+1, strings.Join(ids, ", "))
		case !known:
			return nil, fmt.Errorf("secret %d: ID %s is not one of serve.tokens (%s)%s", i+1, quoteID(id), strings.Join(ids, ", "), hint(id, ids))
		}
		t := Token{ID: id, Secret: secret, Tenant: ts.Tenant, Templates: ts.Templates}
		for _, a := range ts.Actions {
			t.Actions = append(t.Actions, Action(a))
		}
		has[id] = true
		out = append(out, t)
	}
	for _, ts := range s.Tokens {
		if !has[ts.ID] {
			return nil, fmt.Errorf("serve.tokens: token %s has no secret: write %s=SECRET in the tokens' variable or file", quoteID(ts.ID), ts.ID)
		}
	}
	return out, nil
}

// quoteID quotes an ID read from a secret for a message, shortened.
func quoteID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return fmt.Sprintf("%q", id)
}

// hint is "; did you mean X?" for the one of known closest to s, or "".
func hint(s string, known []string) string {
	if best := parser.Closest(s, known); best != "" {
		return "; did you mean " + best + "?"
	}
	return ""
}

// checkScopes checks s.Tokens against cfg's tenants and templates.
func (s Settings) checkScopes(cfg *config.Config, bad func(field, format string, a ...any)) {
	if s.TokenGrace != "" {
		if d, err := time.ParseDuration(s.TokenGrace); err != nil || d < 0 {
			bad("token_grace", "%q: want a duration, such as 10m (0s: a token taken out is refused at once)", s.TokenGrace)
		}
	}
	ids := map[string]bool{}
	for i, ts := range s.Tokens {
		at := fmt.Sprintf("tokens[%d]", i)
		switch {
		case ts.ID == "":
			bad(at+".id", "missing: name the token (storefront, billing-ci)")
			continue
		case strings.ContainsAny(ts.ID, " \t\r\n=,#") || len(ts.ID) > 64:
			bad(at+".id", "%q: want at most 64 characters, without spaces, commas, = or #", ts.ID)
		case ids[ts.ID]:
			bad(at+".id", "%q: given twice (a token with two secrets, while clients move to the new one, is one entry with both secrets)", ts.ID)
		}
		ids[ts.ID] = true
		if len(ts.Actions) == 0 {
			bad(at+".actions", "missing: what token %s may do, one or more of issue, read, monitor, admin", ts.ID)
		}
		for _, a := range ts.Actions {
			if !slices.Contains(Actions, Action(a)) {
				bad(at+".actions", "%q: want issue, read, monitor or admin%s", a, hint(a, []string{"issue", "read", "monitor", "admin"}))
			}
		}
		if _, ok := cfg.Tenants[ts.Tenant]; ts.Tenant != "" && ts.Tenant != AnyTenant && !ok {
			bad(at+".tenant", "%q: no such tenant (tenants: %s)%s", ts.Tenant, strings.Join(cfg.TenantNames(), ", "), hint(ts.Tenant, cfg.TenantNames()))
			continue
		}
		var names []string // the templates the token may reach: its tenant's
		for _, name := range cfg.Names() {
			if tn := cfg.Templates[name].Tenant; ts.Tenant == AnyTenant || tn == ts.Tenant {
				names = append(names, name)
			}
		}
		for _, p := range ts.Templates {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				bad(at+".templates", "%q: want a template's name or a pattern such as order-*", p)
				continue
			}
			if !slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(p, n); return ok }) {
				whose := "of no tenant"
				if ts.Tenant != "" {
					whose = "of tenant " + ts.Tenant
				}
				bad(at+".templates", "%q matches none of the templates %s (%s)%s", p, whose, strings.Join(names, ", "), hint(p, names))
			}
		}
	}
}
