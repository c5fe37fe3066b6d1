// Package server serves the templates of a config.Set over HTTP and JSON,
// for programs in any language: sn serve runs it.
//
// The API, under /v1 (see openapi.json for the whole of it):
//
//	GET  /v1/templates                 the templates
//	GET  /v1/templates/{name}          one template, with its parts
//	POST /v1/templates/{name}/next     issue numbers: {"n": 10, "vars": {...}, "at": "2024-05-01T10:00:00Z"}
//	POST /v1/templates/{name}/preview  sample numbers, drawing nothing
//	POST /v1/templates/{name}/validate is {"number": "..."} one the template prints?
//	POST /v1/templates/{name}/parse    read a number back: its counter key, number and variables
//	POST /v1/templates/{name}/hold     hold a number of a gapless template: {"ttl": "1h", "vars": {...}}
//	POST /v1/templates/{name}/commit   make a held number final: {"number": "..."}
//	POST /v1/templates/{name}/void     record a number as void, with the reason, in its counter's journal
//	POST /v1/templates/{name}/blocks   a block of a counter, whose numbers the client prints (package remote)
//	POST /v1/templates/{name}/notes    the client's record of its blocks in the journal: released, lost, closed
//	GET  /healthz                      the process answers
//	GET  /readyz                       every store answers (503 otherwise)
//	GET  /v1/monitor                   what the monitor page shows: stores, keys, blocks, counts
//	GET  /monitor                      the monitor page, which reads /v1/monitor
//	GET  /metrics                      Prometheus metrics, when Options.Metrics are given
//	GET  /openapi.json                 the OpenAPI 3 document of all this
//
// Every error is JSON, {"error": {"code": ..., "message": ..., "field": ...}},
// with a stable [Code] and its HTTP status: bad input is a 4xx that names
// the field, a store that does not answer a 503.
package server

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/batchjson"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/wire"
)

// DefaultMaxBody is the default for [Options.MaxBody].
const DefaultMaxBody = 1 << 20

// Options configure a [Server].
type Options struct {
	// Tokens are bearer tokens a request to /v1 may carry
	// ("Authorization: Bearer TOKEN"), each of which may do everything
	// with the templates of no tenant: the token of one trusted team.
	// Without Tokens and Scoped, there is no authentication: only for a
	// server that listens on a loopback address.
	Tokens []string
	// Scoped are bearer tokens with their scopes: which templates (of
	// which tenant) each reaches and what it may do. See [Token].
	Scoped []Token
	// TokenGrace is how long a token that [Server.Rotate] took away is
	// still accepted. Zero means DefaultTokenGrace.
	TokenGrace time.Duration
	// MaxBody is the largest request body, in bytes; a larger one is
	// refused with 413. Zero means DefaultMaxBody.
	MaxBody int64
	// Logger receives a line per request that failed (at Warn for a 5xx,
	// Info otherwise) and, at Debug, per request that succeeded. Tokens
	// are never logged. nil means slog.Default().
	Logger *slog.Logger
	// MetricsFor serves GET /metrics to a token that may monitor: it
	// returns the handler of the metrics of the templates and stores the
	// token reaches, or of every series with all (the process's and the
	// Go runtime's too). sn serve gives metrics.Handler over its
	// registry: each token sees the series of its templates (the label
	// template) and of their stores (the label store).
	MetricsFor func(templates, stores map[string]bool, all bool) http.Handler
	// Metrics serves GET /metrics when MetricsFor is nil, to tokens that
	// may monitor and reach every template: it cannot be cut to a
	// token's templates. nil (and no MetricsFor) answers 404.
	Metrics http.Handler
}

// Server is an http.Handler serving a config.Set. It does not own the
// Set: close the Set after the http.Server has shut down, so that every
// request that finished has its numbers in the store.
type Server struct {
	set     *config.Set
	opts    Options
	access  access
	mux     *http.ServeMux
	posts   map[string]http.HandlerFunc // POST /v1/templates/{name}/OP, by OP
	counts  map[string]*counts          // by template name, for the monitor
	sources map[string]blockSource      // by template name, where its blocks come from
	txn     map[string]bool             // by template name, whether it draws in a transaction (gapless)
	handed  handedBlocks                // the blocks handed lately, by client
	vars    map[string]map[string]bool  // by template name, the variables it reads
	drain   atomic.Bool                 // shutting down: /readyz answers 503
}

// Drain makes /readyz answer 503 from now on, so that load balancers
// send no more requests: call it when the process is about to shut down.
// Requests are still served.
func (s *Server) Drain() { s.drain.Store(true) }

// New returns a Server for set.
func New(set *config.Set, opts Options) (*Server, error) {
	if set == nil {
		return nil, errors.New("server: New with a nil Set")
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxBody < 0 {
		return nil, fmt.Errorf("server: MaxBody %d: want a positive size", opts.MaxBody)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{set: set, opts: opts, mux: http.NewServeMux(), counts: map[string]*counts{}, sources: map[string]blockSource{}, txn: map[string]bool{}, vars: map[string]map[string]bool{}}
	for _, name := range set.Names() {
		g, _ := set.Get(name)
		seq, _ := set.Gen(name)
		s.counts[name] = &counts{errs: map[wire.Code]int64{}, lastHanded: map[string]int64{}, hist: &history{stats: func() (sequence.SegmentStats, bool) { return segmentStats(seq) }}}
		s.sources[name] = sourceOf(g, seq)
		s.txn[name] = g.Transactional()
		s.vars[name] = map[string]bool{}
		for _, v := range g.Vars() {
			s.vars[name][v] = true
		}
	}
	if opts.TokenGrace == 0 {
		opts.TokenGrace = DefaultTokenGrace
	}
	if opts.TokenGrace < 0 {
		return nil, fmt.Errorf("server: TokenGrace %v: want a positive duration", opts.TokenGrace)
	}
	s.access.grace, s.access.now = opts.TokenGrace, time.Now
	var tokens []Token
	for i, t := range opts.Tokens {
		if len(t) < 16 {
			return nil, fmt.Errorf("server: token %d is %d bytes long; want at least 16 (a random one: openssl rand -hex 32)", i, len(t))
		}
		tokens = append(tokens, Token{ID: strconv.Itoa(i + 1), Secret: t, Actions: Actions})
	}
	for _, t := range opts.Scoped {
		if _, err := strconv.Atoi(t.ID); err == nil && len(opts.Tokens) > 0 {
			return nil, fmt.Errorf("server: scoped token %q: an ID of digits is that of a token of Options.Tokens (1, 2...): name it otherwise, so that the journal tells them apart", t.ID)
		}
	}
	tokens = append(tokens, opts.Scoped...)
	if len(tokens) > 0 {
		if err := s.access.set(tokens); err != nil {
			return nil, err
		}
	}
	s.posts = map[string]http.HandlerFunc{}
	for _, rt := range s.routes() {
		s.mux.HandleFunc(rt.pattern, rt.handler)
		if op, ok := strings.CutPrefix(rt.pattern, "POST /v1/templates/{name}/"); ok {
			s.posts[op] = rt.handler
		}
	}
	return s, nil
}

// route is one pattern of the API and its handler.
type route struct {
	pattern string // "METHOD /path/{name}"
	handler http.HandlerFunc
}

// routes are the API: openapi.json describes each one, as a test checks.
func (s *Server) routes() []route {
	return []route{
		{"GET /v1/templates", s.templates},
		{"GET /v1/templates/{name}", s.template},
		{"POST /v1/templates/{name}/next", s.next},
		{"POST /v1/templates/{name}/preview", s.preview},
		{"POST /v1/templates/{name}/validate", s.validate},
		{"POST /v1/templates/{name}/parse", s.parse},
		{"POST /v1/templates/{name}/hold", s.hold},
		{"POST /v1/templates/{name}/commit", s.commit},
		{"POST /v1/templates/{name}/void", s.void},
		{"POST /v1/templates/{name}/blocks", s.blocks},
		{"POST /v1/templates/{name}/notes", s.notes},
		{"GET /healthz", s.healthz},
		{"GET /readyz", s.readyz},
		{"GET /v1/monitor", s.monitor},
		{"GET /monitor", s.page},
		{"GET /metrics", s.metrics},
		{"GET /openapi.json", s.openapi},
	}
}

// Routes returns the patterns the Server serves, such as
// "POST /v1/templates/{name}/next".
func (s *Server) Routes() []string {
	var out []string
	for _, rt := range s.routes() {
		out = append(out, rt.pattern)
	}
	return out
}

//go:embed openapi.json
var openapiDoc []byte

// OpenAPI returns the OpenAPI 3 document of the API, which GET
// /openapi.json serves.
func OpenAPI() []byte { return bytes.Clone(openapiDoc) }

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openapiDoc)
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &recorder{ResponseWriter: w, status: http.StatusOK, start: time.Now()}
	if r.Body != nil && r.Body != http.NoBody {
		// An answer given before the body is read closes the
		// connection: net/http would otherwise read what is left of the
		// body first, for as long as the client cares to send it.
		rw.tracked = trackedBody{ReadCloser: r.Body}
		rw.body = &rw.tracked
		r.Body = rw.body
	}
	defer func() {
		if v := recover(); v != nil {
			s.opts.Logger.Error("server: a handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
			if !rw.wrote {
				s.fail(rw, wire.Error{Code: wire.CodeInternal, Message: fmt.Sprintf("server: internal error: %v", v)}, http.StatusInternalServerError)
			}
		}
		s.log(r, rw, time.Since(rw.start))
	}()
	rw.Header()["X-Content-Type-Options"] = nosniff
	if s.access.tokenless() && !loopbackHost(r.Host) {
		// Without tokens the server trusts whoever reaches it, which
		// must be this machine: a page whose name resolves here (DNS
		// rebinding) sends its own Host.
		s.fail(rw, wire.Error{Code: wire.CodeForbidden, Message: fmt.Sprintf("Host %s: a server without tokens answers only loopback names (localhost, 127.0.0.1, [::1]); give it tokens to serve other names", quote(r.Host))}, http.StatusForbidden)
		return
	}
	if err := crossOrigin.Check(r); err != nil {
		s.fail(rw, wire.Error{Code: wire.CodeForbidden, Message: "a cross-origin request from a browser (Sec-Fetch-Site or Origin): refused, so that no web page can issue numbers"}, http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost && !jsonContent(r.Header.Get("Content-Type")) {
		s.fail(rw, wire.Error{Code: wire.CodeMediaType, Message: fmt.Sprintf("Content-Type %s: want application/json", quote(r.Header.Get("Content-Type")))}, http.StatusUnsupportedMediaType)
		return
	}
	if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p {
		// The mux would redirect to the clean path, before any token is
		// asked for: a path is asked for as the API spells it.
		s.fail(rw, wire.Error{Code: wire.CodeNotFound, Message: fmt.Sprintf("%s %s: no such path (paths are written clean: no //, /./ or trailing /)", r.Method, quote(p))}, http.StatusNotFound)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/metrics" {
		if rw.grant = s.access.lookup(r); rw.grant == nil {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="sn"`)
			s.fail(rw, wire.Error{Code: wire.CodeUnauthorized, Message: "a bearer token is needed: Authorization: Bearer TOKEN"}, http.StatusUnauthorized)
			return
		}
	}
	if name, h := s.templateRoute(r); h != nil {
		rw.name = name
		// A template's POST: routed here, without the mux's two
		// lookups (Handler, then ServeHTTP).
		if r.Body != nil {
			r.Body = http.MaxBytesReader(rw, r.Body, s.opts.MaxBody)
		}
		h(rw, r)
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		// The mux answers 404 or 405 in plain text: answer in JSON.
		probe := &statusProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if allow := probe.header.Get("Allow"); allow != "" {
			rw.Header().Set("Allow", allow)
		}
		if probe.status == http.StatusMethodNotAllowed {
			s.fail(rw, wire.Error{Code: wire.CodeMethod, Message: fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow"))}, http.StatusMethodNotAllowed)
			return
		}
		s.fail(rw, wire.Error{Code: wire.CodeNotFound, Message: fmt.Sprintf("%s %s: no such path", r.Method, r.URL.Path)}, http.StatusNotFound)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(rw, r.Body, s.opts.MaxBody)
	}
	s.mux.ServeHTTP(rw, r)
}

// templateRoute returns the handler of POST /v1/templates/{name}/OP, or
// nil for another request; the handler finds the name with templateName.
func (s *Server) templateRoute(r *http.Request) (string, http.HandlerFunc) {
	const prefix = "/v1/templates/"
	p := r.URL.Path
	if r.Method != http.MethodPost || !strings.HasPrefix(p, prefix) || r.URL.RawPath != "" {
		return "", nil
	}
	name, op, ok := strings.Cut(p[len(prefix):], "/")
	if !ok || name == "" || strings.Contains(op, "/") {
		return "", nil
	}
	return name, s.posts[op]
}

// templateName returns the {name} of the request's path.
func templateName(w http.ResponseWriter, r *http.Request) string {
	if rw, ok := w.(*recorder); ok && rw.name != "" {
		return rw.name
	}
	return r.PathValue("name")
}

// crossOrigin refuses the state-changing requests (POST) a browser sends
// from another origin (Sec-Fetch-Site, or Origin against Host).
var crossOrigin = http.NewCrossOriginProtection()

// jsonContent reports whether a Content-Type is application/json, with
// parameters or not. A browser sends it cross-origin only after a CORS
// preflight, which this server never grants.
func jsonContent(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// loopbackHost reports whether the Host of a request names this machine:
// localhost (or a name under .localhost), or a loopback address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// quote quotes a value of a request for a message: at most its first 64
// bytes and its length.
func quote(s string) string { return engine.Quote(s) }

func (s *Server) log(r *http.Request, rw *recorder, took time.Duration) {
	level := slog.LevelDebug
	switch {
	case rw.status >= 500:
		level = slog.LevelWarn
	case rw.status >= 400:
		level = slog.LevelInfo
	}
	if !s.opts.Logger.Enabled(r.Context(), level) {
		return
	}
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rw.status, "took", took, "remote", r.RemoteAddr}
	if rw.code != "" {
		attrs = append(attrs, "code", rw.code, "err", rw.message)
	}
	s.opts.Logger.Log(r.Context(), level, "server: request", attrs...)
}

// generator returns the Generator of the request's template, if the
// request's token may do one of actions with it, or answers 404 (no such
// template, or one of another tenant) or 403.
func (s *Server) generator(w http.ResponseWriter, r *http.Request, actions ...Action) (string, *sn.Generator, bool) {
	name := templateName(w, r)
	gr := grantIn(w)
	g, ok := s.set.Get(name)
	if ok {
		tenant, _ := s.set.Tenant(name)
		ok = gr.reaches(name, tenant)
	}
	if !ok {
		msg := fmt.Sprintf("no template %s", quote(name))
		if names := s.visible(gr); len(names) > 0 {
			msg += " (templates: " + strings.Join(names, ", ") + ")"
		}
		s.fail(w, wire.Error{Code: wire.CodeNotFound, Message: msg, Field: "name"}, http.StatusNotFound)
		return name, nil, false
	}
	if !slices.ContainsFunc(actions, func(a Action) bool { return gr.actions[a] }) {
		s.forbid(w, gr, actions, "template "+name)
		return name, nil, false
	}
	return name, g, true
}

// forbid answers 403: the token may not do actions (any of them) with
// what.
func (s *Server) forbid(w http.ResponseWriter, gr *grant, actions []Action, what string) {
	var want []string
	for _, a := range actions {
		want = append(want, string(a))
	}
	scope := gr.scope()
	if scope == "" {
		scope = "none"
	}
	s.fail(w, wire.Error{Code: wire.CodeForbidden, Message: fmt.Sprintf("token %s may not %s %s: its scope is %s; ask for a token with %s", quote(gr.id), strings.Join(want, " or "), what, scope, strings.Join(want, " or "))}, http.StatusForbidden)
}

// visible returns the names of the templates gr reaches.
func (s *Server) visible(gr *grant) []string {
	var out []string
	for _, name := range s.set.Names() {
		if tenant, _ := s.set.Tenant(name); gr.reaches(name, tenant) {
			out = append(out, name)
		}
	}
	return out
}

// grantIn returns the grant of the request w answers.
func grantIn(w http.ResponseWriter) *grant {
	if rw, ok := w.(*recorder); ok && rw.grant != nil {
		return rw.grant
	}
	return &grant{actions: map[Action]bool{}}
}

func (s *Server) templates(w http.ResponseWriter, r *http.Request) {
	gr := grantIn(w)
	// Listing is read's alone: a token that issues reaches the templates
	// it names (GET the template), and learns no other's name.
	if !gr.actions[Read] {
		s.forbid(w, gr, []Action{Read}, "the templates")
		return
	}
	out := wire.TemplatesResponse{Templates: []wire.TemplateInfo{}}
	for _, name := range s.visible(gr) {
		g, _ := s.set.Get(name)
		out.Templates = append(out.Templates, s.templateOf(name, g, false))
	}
	reply(w, http.StatusOK, out)
}

func (s *Server) template(w http.ResponseWriter, r *http.Request) {
	name, g, ok := s.generator(w, r, Read, Issue)
	if !ok {
		return
	}
	t := s.templateOf(name, g, true)
	gr := grantIn(w)
	for _, a := range Actions {
		if gr.actions[a] {
			t.Actions = append(t.Actions, string(a))
		}
	}
	reply(w, http.StatusOK, t)
}

func (s *Server) next(w http.ResponseWriter, r *http.Request) { s.issue(w, r, false) }

func (s *Server) preview(w http.ResponseWriter, r *http.Request) { s.issue(w, r, true) }

// issue answers next and, with preview, preview.
func (s *Server) issue(w http.ResponseWriter, r *http.Request, preview bool) {
	action := Issue
	if preview {
		action = Read
	}
	name, g, ok := s.generator(w, r, action)
	if !ok {
		return
	}
	issued, ended := 0, wire.Code("")
	if !preview {
		defer func() { s.counts[name].hist.issued(time.Now(), issued, ended) }()
	}
	failed := func(code wire.Code) {
		ended = code
		if !preview {
			s.counts[name].failed(code)
		}
	}
	// refuse answers e, for a request the server refuses before the
	// Generator sees it, and passes it to the Generator's middleware
	// (metrics, a log): every request to issue takes one path.
	refuse := func(e wire.Error, status int, sr sn.Request) {
		if status != 0 {
			s.fail(w, e, status)
		}
		failed(e.Code)
		if !preview {
			g.Refuse(r.Context(), sr, e)
		}
	}
	var req wire.NextRequest
	present, code := s.decode(w, r, &req)
	if code != "" {
		refuse(wire.Error{Code: code, Message: "the body of the request: see the answer"}, 0, sn.Request{})
		return
	}
	at, err := instant(req.At)
	if err != nil {
		refuse(wire.Error{Code: wire.CodeInstant, Message: fmt.Sprintf("at %q: want an RFC 3339 instant such as 2024-05-01T10:00:00Z", req.At), Field: "at"}, http.StatusBadRequest, sn.Request{N: req.N, Vars: req.Vars})
		return
	}
	if unused := s.unusedVars(name, req.Vars); len(unused) > 0 {
		reads := "none"
		if g.Vars() != nil {
			reads = strings.Join(g.Vars(), ", ")
		}
		// Names come from the client: quoted and shortened, at most 5.
		shown := make([]string, 0, 6)
		for _, v := range unused[:min(len(unused), 5)] {
			shown = append(shown, quote(v))
		}
		if len(unused) > 5 {
			shown = append(shown, fmt.Sprintf("and %d more", len(unused)-5))
		}
		refuse(wire.Error{Code: wire.CodeVarInvalid, Message: fmt.Sprintf("vars: %s: not a variable of template %s, which reads: %s", strings.Join(shown, ", "), quote(name), reads), Field: "vars." + unused[0][:min(len(unused[0]), 64)]}, http.StatusBadRequest, sn.Request{N: req.N, At: at, Vars: req.Vars})
		return
	}
	if present["n"] && (req.N < 1 || req.N > sn.MaxN) {
		refuse(wire.Error{Code: wire.CodeTooMany, Message: fmt.Sprintf("n %d: want 1 to %d", req.N, sn.MaxN), Field: "n"}, http.StatusBadRequest, sn.Request{At: at, Vars: req.Vars})
		return
	}
	sr := sn.Request{N: req.N, At: at, Vars: req.Vars}
	if !preview {
		key, e := idempotencyOf(r, name, g)
		if e != nil {
			refuse(*e, http.StatusBadRequest, sr)
			return
		}
		sr.IdempotencyKey = key
	}
	out := answers.Get().(*[]byte)
	defer putAnswer(out)
	if preview {
		nums, err := g.Preview(r.Context(), sr)
		if err != nil {
			failed(s.error(w, err))
			return
		}
		*out = batchjson.Append((*out)[:0], strs(nums))
		replyNumbers(w, *out)
		return
	}
	// The numbers are printed into the answer as they are issued.
	// Who asks: an Idempotency-Key is the token's own (another token's
	// same key is another request), and the journal names it.
	ctx := r.Context()
	if sr.IdempotencyKey != "" {
		ctx = sn.WithActor(ctx, actor(grantIn(w)))
	}
	var buf []byte
	var n int
	txn := s.txn[name]
	if txn {
		// A gapless template: the request's numbers, their journal
		// records and its idempotency key's record are one
		// transaction, committed before the answer, or rolled back.
		err = g.Transact(ctx, func(ctx context.Context) error {
			var err error
			buf, n, err = g.AppendJSON(ctx, append((*out)[:0], batchjson.Open...), sr)
			return err
		})
	} else {
		buf, n, err = g.AppendJSON(ctx, append((*out)[:0], batchjson.Open...), sr)
	}
	*out = buf
	if err != nil {
		code := s.error(w, err)
		failed(code)
		if n > 0 && sr.IdempotencyKey == "" && !txn {
			// Numbers issued before the error: the caller gets an
			// error, and never learns them. (With an Idempotency-Key,
			// the Generator voids them itself.)
			s.voidUndelivered(w, r, g, (*out)[len(batchjson.Open):], code)
		}
		return
	}
	issued = n
	s.counts[name].issued.Add(int64(issued))
	*out = append(*out, batchjson.Close...)
	replyNumbers(w, *out)
}

// voidUndelivered records as void the numbers of list, a JSON list a
// request drew before it failed with code, so that the journal says why
// they were never used: the caller got an error, not them. It outlives
// the request, for a request cut off by its client is one such. A store
// that keeps no journal has nothing to explain.
func (s *Server) voidUndelivered(w http.ResponseWriter, r *http.Request, g *sn.Generator, list []byte, code wire.Code) {
	data := slices.Concat([]byte(batchjson.Open), list, []byte(batchjson.Close))
	nums, ok := batchjson.Read(data)
	if !ok {
		var resp wire.NextResponse
		if err := json.Unmarshal(data, &resp); err != nil {
			s.opts.Logger.Error("server: the numbers of a failed request were not voided", "template", g.Name(), "err", err)
			return
		}
		nums = resp.Numbers
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), pingTimeout)
	defer cancel()
	reason := fmt.Sprintf("drawn for a request that failed partway (%s): never delivered", code)
	if err := g.VoidNumbers(sn.WithActor(ctx, actor(grantIn(w))), nums, reason); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		s.opts.Logger.Warn("server: the numbers of a failed request were not voided: they are gaps the journal does not explain", "template", g.Name(), "numbers", len(nums), "err", err)
	}
}

// idempotencyOf returns the request's Idempotency-Key, "" for none, or
// the error that refuses it.
func idempotencyOf(r *http.Request, name string, g *sn.Generator) (string, *wire.Error) {
	key, ok := r.Header["Idempotency-Key"]
	if !ok {
		return "", nil
	}
	if len(key) != 1 || !idempotencyKey(key[0]) {
		return "", &wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("Idempotency-Key: want one value of 1 to %d visible ASCII characters", claim.MaxKey), Field: "Idempotency-Key"}
	}
	if !g.SharedIdempotency() {
		return "", &wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("Idempotency-Key: template %s keeps no idempotency keys in its store (its generator has none to share), so a retry that reached another replica would be given new numbers: send the request without the key", quote(name)), Field: "Idempotency-Key"}
	}
	return key[0], nil
}

// unusedVars returns, sorted, the variables of vars that template name
// does not read.
func (s *Server) unusedVars(name string, vars map[string]string) []string {
	var out []string
	for k := range vars {
		if !s.vars[name][k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// answers are the buffers of the answers. One larger than 1 MiB, of a
// call for many long numbers, is not kept.
var answers = sync.Pool{New: func() any { return new([]byte) }}

func putAnswer(b *[]byte) {
	if cap(*b) <= 1<<20 {
		answers.Put(b)
	}
}

// strs is a batch of strings: Preview's.
type strs []string

func (s strs) Len() int           { return len(s) }
func (s strs) Bytes(i int) []byte { return []byte(s[i]) }

// Header values set on every answer, shared: a header map set with them
// is never changed in place by net/http.
var (
	nosniff = []string{"nosniff"}
	jsonCT  = []string{"application/json"}
	noStore = []string{"no-store"}
)

// replyNumbers answers out, a NextResponse written by hand (package batchjson).
func replyNumbers(w http.ResponseWriter, out []byte) {
	h := w.Header()
	h["Content-Type"] = jsonCT
	h["Cache-Control"] = noStore
	// With its length told, the answer goes out in one piece, not
	// chunked, and the client reads it into one buffer.
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// numberRequest reads the template and the body of validate and parse,
// or answers the error.
func (s *Server) numberRequest(w http.ResponseWriter, r *http.Request) (*sn.Generator, wire.NumberRequest, bool) {
	var req wire.NumberRequest
	_, g, ok := s.generator(w, r, Read)
	if !ok {
		return nil, req, false
	}
	if _, code := s.decode(w, r, &req); code != "" {
		return nil, req, false
	}
	return g, req, true
}

// printable reports whether s, a text the journal keeps (a void's
// reason, a block's client), has no control or format character: an
// auditor reads it in sn gaps, line by line, and it must not draw lines
// or move the cursor there.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// idempotencyKey reports whether k is a key the API takes: 1 to 255
// visible ASCII characters (a UUID, say), as quoted in logs and errors.
func idempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > claim.MaxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

// void records a number as void, with the reason, in its counter's
// journal; the actor is the token the request came with. A token that
// may administer voids any number; one that may only issue voids a
// number held (POST hold) and not committed: the draft it abandons.
func (s *Server) void(w http.ResponseWriter, r *http.Request) {
	name, g, ok := s.generator(w, r, Admin, Issue)
	if !ok {
		return
	}
	gr := grantIn(w)
	var req wire.VoidRequest
	if _, code := s.decode(w, r, &req); code != "" {
		return
	}
	if req.Reason == "" || len(req.Reason) > journal.MaxReason || !printable(req.Reason) {
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("reason: want why the number is void, 1 to %d bytes of printable text (no control characters): an auditor reads it", journal.MaxReason), Field: "reason"}, http.StatusBadRequest)
		return
	}
	ctx := sn.WithActor(r.Context(), actor(gr))
	if !gr.actions[Admin] {
		if !s.txn[name] {
			s.forbid(w, gr, []Action{Admin}, "template "+name)
			return
		}
		if err := g.VoidHold(ctx, req.Number, req.Reason); err != nil {
			if errors.Is(err, sequence.ErrInvalidArgument) && !errors.Is(err, sn.ErrInvalidNumber) {
				err = fmt.Errorf("%w; a token with the issue action voids only a number held and not committed, and one with the admin action voids any", err)
			}
			s.error(w, err)
			return
		}
	} else if err := g.Void(ctx, req.Number, req.Reason); err != nil {
		s.error(w, err)
		return
	}
	reply(w, http.StatusOK, wire.VoidResponse{Number: req.Number, Void: true})
}

// maxHold is the longest hold a request asks for.
const maxHold = 90 * 24 * time.Hour

// hold holds a number of a gapless template for a document that becomes
// final later.
func (s *Server) hold(w http.ResponseWriter, r *http.Request) {
	name, g, ok := s.generator(w, r, Issue)
	if !ok {
		return
	}
	var req wire.HoldRequest
	if _, code := s.decode(w, r, &req); code != "" {
		s.counts[name].failed(code)
		return
	}
	bad := func(e wire.Error) {
		s.counts[name].failed(e.Code)
		s.fail(w, e, http.StatusBadRequest)
	}
	at, err := instant(req.At)
	if err != nil {
		bad(wire.Error{Code: wire.CodeInstant, Message: fmt.Sprintf("at %q: want an RFC 3339 instant such as 2024-05-01T10:00:00Z", req.At), Field: "at"})
		return
	}
	if unused := s.unusedVars(name, req.Vars); len(unused) > 0 {
		bad(wire.Error{Code: wire.CodeVarInvalid, Message: fmt.Sprintf("vars: %s: not a variable of template %s", quote(unused[0]), quote(name)), Field: "vars." + unused[0][:min(len(unused[0]), 64)]})
		return
	}
	ttl, err := time.ParseDuration(req.TTL)
	if err != nil || ttl < time.Second || ttl > maxHold {
		bad(wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("ttl %s: want how long the number is held, as a Go duration from 1s to %v (\"15m\", \"24h\")", quote(req.TTL), maxHold), Field: "ttl"})
		return
	}
	key, e := idempotencyOf(r, name, g)
	if e != nil {
		bad(*e)
		return
	}
	h, err := g.Hold(sn.WithActor(r.Context(), actor(grantIn(w))), sn.Request{At: at, Vars: req.Vars, IdempotencyKey: key}, ttl)
	if err != nil {
		s.counts[name].failed(s.error(w, err))
		return
	}
	s.counts[name].issued.Add(1)
	s.counts[name].hist.issued(time.Now(), 1, "")
	reply(w, http.StatusOK, wire.HoldResponse{Number: h.Number, Deadline: h.Deadline.UTC()})
}

// commit makes a held number final.
func (s *Server) commit(w http.ResponseWriter, r *http.Request) {
	_, g, ok := s.generator(w, r, Issue)
	if !ok {
		return
	}
	var req wire.CommitRequest
	if _, code := s.decode(w, r, &req); code != "" {
		return
	}
	if err := g.Commit(sn.WithActor(r.Context(), actor(grantIn(w))), req.Number); err != nil {
		s.error(w, err)
		return
	}
	reply(w, http.StatusOK, wire.CommitResponse{Number: req.Number, Committed: true})
}

// actor names who sent a request, for a journal: "sn serve, token ID",
// ID the token's (for Options.Tokens, its place in the list from 1), or
// "sn serve" without tokens.
func actor(gr *grant) string {
	if gr.id == "" {
		return "sn serve"
	}
	return "sn serve, token " + gr.id
}

func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	g, req, ok := s.numberRequest(w, r)
	if !ok {
		return
	}
	if err := g.Validate(req.Number); err != nil {
		e, _ := errorOf(err)
		reply(w, http.StatusOK, wire.ValidateResponse{Error: &e})
		return
	}
	reply(w, http.StatusOK, wire.ValidateResponse{Valid: true})
}

func (s *Server) parse(w http.ResponseWriter, r *http.Request) {
	g, req, ok := s.numberRequest(w, r)
	if !ok {
		return
	}
	p, err := g.Parse(req.Number)
	if err != nil {
		s.error(w, err)
		return
	}
	reply(w, http.StatusOK, parseResponse(p))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]bool{"ok": true})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	// The stores and their templates are told to a token that may
	// monitor, each its own; a load balancer gets ready or not.
	gr := s.access.lookup(r)
	if gr != nil && !gr.actions[Monitor] {
		gr = nil
	}
	h, all := s.health(r, gr)
	h.Ready = all // the balancer's question: every store
	status := http.StatusOK
	if s.drain.Load() {
		h.Ready = false
	}
	if !h.Ready {
		status = http.StatusServiceUnavailable
	}
	reply(w, status, h)
}

// pingTimeout bounds how long health waits for the stores: a store that
// takes longer is down.
const pingTimeout = 5 * time.Second

// health pings every store, and describes those of the templates gr
// reaches (none for nil); all reports whether every store answered.
func (s *Server) health(r *http.Request, gr *grant) (h wire.Health, all bool) {
	h = wire.Health{Ready: true, Stores: []wire.StoreHealth{}}
	all = true
	ctx, cancel := context.WithTimeout(r.Context(), pingTimeout)
	defer cancel()
	for _, st := range s.set.Ping(ctx) {
		var names []string
		if gr != nil {
			for _, name := range st.Templates {
				if tenant, _ := s.set.Tenant(name); gr.reaches(name, tenant) {
					names = append(names, name)
				}
			}
		}
		// Ready is every store's for /readyz (gr nil), and a token's
		// stores' for the token: one tenant does not learn that
		// another's store is down.
		if st.Err != nil {
			all = false
			if gr == nil || len(names) > 0 {
				h.Ready = false
			}
		}
		if len(names) == 0 {
			continue
		}
		sh := wire.StoreHealth{Store: st.Store, Templates: names, OK: st.Err == nil, Millis: float64(st.Took.Microseconds()) / 1000}
		if st.Err != nil {
			sh.Error = st.Err.Error()
		}
		h.Stores = append(h.Stores, sh)
	}
	return h, all
}

// decode reads the request's JSON body into v and returns the fields it
// had, or answers 400 or 413 and returns its code. An empty body is an
// empty object. The body must be UTF-8 (encoding/json would put U+FFFD in
// place of a bad byte, silently), and its field names must be v's exactly
// (encoding/json would match "N" to "n").
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) (map[string]bool, wire.Code) {
	body, err := io.ReadAll(r.Body)
	bad := func(e wire.Error) (map[string]bool, wire.Code) {
		e.Code = wire.CodeBadRequest
		s.fail(w, e, http.StatusBadRequest)
		return nil, wire.CodeBadRequest
	}
	if err != nil {
		if big := (*http.MaxBytesError)(nil); errors.As(err, &big) {
			s.fail(w, wire.Error{Code: wire.CodeTooLarge, Message: fmt.Sprintf("the body is over %d bytes", big.Limit)}, http.StatusRequestEntityTooLarge)
			return nil, wire.CodeTooLarge
		}
		return bad(wire.Error{Message: "the body: " + err.Error()})
	}
	if len(bytes.Trim(body, " \t\r\n")) == 0 { // JSON's white space, no other
		return map[string]bool{}, ""
	}
	if nr, ok := v.(*wire.NextRequest); ok {
		// The body of most requests, {"n": 10} or {}, read without
		// reflection: a fifth of a request's time otherwise.
		if n, given, ok := fastN(body); ok {
			nr.N = n
			if given {
				return onlyN, ""
			}
			return map[string]bool{}, ""
		}
	}
	if !utf8.Valid(body) {
		return bad(wire.Error{Message: "the body is not UTF-8"})
	}
	fields, err := objectKeys(body)
	if err != nil {
		return bad(wire.Error{Message: "the body: " + err.Error()})
	}
	known := jsonFields(v)
	for name := range fields {
		if !known[name] {
			return bad(wire.Error{Message: fmt.Sprintf("the body: unknown field %s (fields are lower case: %s)", quote(name), strings.Join(slices.Sorted(maps.Keys(known)), ", ")), Field: name})
		}
	}
	// One object of known fields, each once: what is left to find is a
	// value of the wrong type.
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(body, v); errors.As(err, &te) {
		return bad(wire.Error{Field: te.Field, Message: fmt.Sprintf("the body: %s is a JSON %s; want %s", te.Field, te.Value, jsonType(te.Type.Kind().String()))})
	} else if err != nil {
		return bad(wire.Error{Message: "the body: " + err.Error()})
	}
	return fields, ""
}

// onlyN is the fields of a body that has n alone. It is never changed.
var onlyN = map[string]bool{"n": true}

// fastN reads a body that is {"n": N} or {}, with white space anywhere
// JSON allows it and N a whole number of at most 9 digits written as JSON
// writes it, and reports whether n was given; ok is false for any other
// body, which decode reads the slow way.
func fastN(b []byte) (n int, given, ok bool) {
	i := 0
	ws := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	lit := func(s string) bool {
		if len(b)-i >= len(s) && string(b[i:i+len(s)]) == s {
			i += len(s)
			return true
		}
		return false
	}
	ws()
	if !lit("{") {
		return 0, false, false
	}
	ws()
	if lit(`"n"`) {
		ws()
		if !lit(":") {
			return 0, false, false
		}
		ws()
		neg := lit("-")
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			n = n*10 + int(b[i]-'0')
			i++
		}
		if digits := i - start; digits == 0 || digits > 9 || (digits > 1 && b[start] == '0') {
			return 0, false, false
		}
		if neg {
			n = -n
		}
		given = true
		ws()
	}
	if !lit("}") {
		return 0, false, false
	}
	ws()
	return n, given, i == len(b)
}

// objectKeys returns the keys of the JSON object body, refusing anything
// but one object, and a key given twice ({"n": 2, "n": null}: which one
// counts is a guess).
func objectKeys(body []byte) (map[string]bool, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return nil, errors.New("want a JSON object")
	}
	keys := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		k, _ := t.(string)
		if keys[k] {
			return nil, fmt.Errorf("field %s given twice", quote(k))
		}
		keys[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return keys, nil
}

// fieldSets caches jsonFields by type: they are read on every request.
var fieldSets sync.Map // reflect.Type -> map[string]bool

// jsonFields returns the JSON names of the fields of the struct v points
// to.
func jsonFields(v any) map[string]bool {
	t := reflect.TypeOf(v).Elem()
	if m, ok := fieldSets.Load(t); ok {
		return m.(map[string]bool)
	}
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	fieldSets.Store(t, out)
	return out
}

// jsonType names a Go kind as JSON does.
func jsonType(kind string) string {
	switch kind {
	case "int", "int64", "int32":
		return "a whole number"
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	}
	return kind
}

// error answers err with its code and status, and returns the code.
func (s *Server) error(w http.ResponseWriter, err error) wire.Code {
	e, status := errorOf(err)
	if status == http.StatusServiceUnavailable {
		retry := int64(1)
		if d, ok := sequence.RetryAfterOf(err); ok && d > time.Second {
			retry = int64(d / time.Second) // rounded up, without overflowing
			if d%time.Second != 0 {
				retry++
			}
		}
		w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
	}
	s.fail(w, e, status)
	return e.Code
}

// fail answers the error e with status.
func (s *Server) fail(w http.ResponseWriter, e wire.Error, status int) {
	if rw, ok := w.(*recorder); ok {
		rw.code, rw.message = e.Code, e.Message
	}
	reply(w, status, wire.ErrorResponse{Error: e})
}

// reply answers v as JSON with status.
func reply(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"server: the answer is not JSON"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// recorder keeps the status and error code of a response, for the log.
type recorder struct {
	http.ResponseWriter
	status  int
	wrote   bool
	code    wire.Code
	message string
	body    *trackedBody // the request's body, or nil
	tracked trackedBody  // what body points to: one allocation for both
	grant   *grant       // what the request's token may do, once authorized
	name    string       // the template's name, when ServeHTTP routed the request itself
	start   time.Time    // when ServeHTTP began: for the log
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
		if r.body != nil && !r.body.done {
			// net/http reads up to 256 KiB of an unread body after the
			// answer, at the client's pace: end the reading now.
			r.Header().Set("Connection", "close")
			http.NewResponseController(r.ResponseWriter).SetReadDeadline(time.Now())
		}
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// trackedBody is a request body that knows whether it was read to its end.
type trackedBody struct {
	io.ReadCloser
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
	}
	return n, err
}

// statusProbe takes the answer of the mux's own 404 and 405 handlers.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }
