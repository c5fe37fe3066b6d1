package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend/bolt"
	_ "github.com/sngen/sn/backend/snowflake"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/servertest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// The helpers of the tests, in package servertest, which module tests
// shares.
var (
	start       = servertest.Start
	startConfig = servertest.StartConfig
	call        = servertest.Call
)

const testToken = servertest.Token

func TestIssue(t *testing.T) {
	ts, _ := start(t, server.Options{})
	var got wire.NextResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", nil, &got); st != 200 || !cmp.Equal(got.Numbers, []string{"SN-00000001-8"}) {
		t.Errorf("next: %d %v", st, got.Numbers)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 3}, &got); st != 200 || !cmp.Equal(got.Numbers, []string{"SN-00000002-6", "SN-00000003-4", "SN-00000004-2"}) {
		t.Errorf("next n=3: %d %v", st, got.Numbers)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/invoices/next", wire.NextRequest{At: "2023-12-31T23:00:00Z"}, &got); st != 200 || !cmp.Equal(got.Numbers, []string{"INV/2023/00001"}) {
		t.Errorf("next at: %d %v", st, got.Numbers)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/tickets/next", wire.NextRequest{Vars: map[string]string{"customer": "ACME"}, N: 2}, &got); st != 200 || !cmp.Equal(got.Numbers, []string{"ACME-1", "ACME-2"}) {
		t.Errorf("next with vars: %d %v", st, got.Numbers)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/preview", wire.NextRequest{N: 2}, &got); st != 200 || !cmp.Equal(got.Numbers, []string{"SN-00000001-8", "SN-00000002-6"}) {
		t.Errorf("preview: %d %v", st, got.Numbers)
	}
	// Preview drew nothing.
	if call(t, ts, "POST", "/v1/templates/orders/next", nil, &got); !cmp.Equal(got.Numbers, []string{"SN-00000005-9"}) {
		t.Errorf("next after preview: %v", got.Numbers)
	}
}

func TestReadBack(t *testing.T) {
	ts, _ := start(t, server.Options{})
	var v wire.ValidateResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/validate", wire.NumberRequest{Number: "SN-00000002-6"}, &v); st != 200 || !v.Valid || v.Error != nil {
		t.Errorf("validate a good number: %d %+v", st, v)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/validate", wire.NumberRequest{Number: "SN-00000002-7"}, &v); st != 200 || v.Valid || v.Error == nil || v.Error.Code != wire.CodeInvalidNumber || v.Error.Part != "checksum" {
		t.Errorf("validate a bad check digit: %d %+v", st, v)
	}
	var p wire.ParseResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/tickets/parse", wire.NumberRequest{Number: "ACME-12"}, &p); st != 200 || p.Seq != 12 || p.Vars["customer"] != "ACME" || len(p.Draws) != 1 || p.Draws[0].Key != p.Key {
		t.Errorf("parse: %d %+v", st, p)
	}
	var list wire.TemplatesResponse
	if st, _ := call(t, ts, "GET", "/v1/templates", nil, &list); st != 200 || len(list.Templates) != 4 || list.Templates[0].Name != "invoices" {
		t.Errorf("templates: %d %+v", st, list)
	}
	var tpl wire.TemplateInfo
	if st, _ := call(t, ts, "GET", "/v1/templates/orders", nil, &tpl); st != 200 || tpl.Template == "" || len(tpl.Parts) != 4 || tpl.MaxLen != 13 {
		t.Errorf("template: %d %+v", st, tpl)
	}
}

// Every error is JSON with its code, its status, and the field at fault.
func TestErrors(t *testing.T) {
	ts, set := start(t, server.Options{MaxBody: 256})
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		code         wire.Code
		field        string
	}{
		{"POST", "/v1/templates/tickets/next", nil, 400, wire.CodeVarMissing, "vars.customer"},
		{"POST", "/v1/templates/tickets/next", `{"vars": {"customer": "acme"}}`, 400, wire.CodeVarInvalid, "vars.customer"},
		{"POST", "/v1/templates/orders/next", `{"at": "yesterday"}`, 400, wire.CodeInstant, "at"},
		{"POST", "/v1/templates/orders/next", `{"n": 100001}`, 400, wire.CodeTooMany, "n"},
		{"POST", "/v1/templates/orders/next", `{"n": -1}`, 400, wire.CodeTooMany, "n"},
		{"POST", "/v1/templates/orders/next", `{"n": "3"}`, 400, wire.CodeBadRequest, "n"},
		{"POST", "/v1/templates/orders/next", `{"count": 3}`, 400, wire.CodeBadRequest, "count"},
		{"POST", "/v1/templates/orders/next", `{"n": 3`, 400, wire.CodeBadRequest, ""},
		{"POST", "/v1/templates/orders/next", `{} {}`, 400, wire.CodeBadRequest, ""},
		{"POST", "/v1/templates/orders/next", `{"vars": {"x": "` + strings.Repeat("y", 300) + `"}}`, 413, wire.CodeTooLarge, ""},
		{"POST", "/v1/templates/nope/next", nil, 404, wire.CodeNotFound, "name"},
		{"GET", "/v2/anything", nil, 404, wire.CodeNotFound, ""},
		{"GET", "/v1/templates/orders/next", nil, 405, wire.CodeMethod, ""},
		{"POST", "/v1/templates/orders/parse", wire.NumberRequest{Number: "SN-1"}, 422, wire.CodeInvalidNumber, "number"},
		{"POST", "/v1/templates/tiny/next", nil, 200, "", ""}, // T9: the last the width holds
		{"POST", "/v1/templates/tiny/next", nil, 409, wire.CodeOverflow, ""},
	} {
		var got wire.ErrorResponse
		st, _ := call(t, ts, tc.method, tc.path, tc.body, &got)
		if st != tc.status || got.Error.Code != tc.code || got.Error.Field != tc.field {
			t.Errorf("%s %s %v: %d %+v; want %d %s field %q", tc.method, tc.path, tc.body, st, got.Error, tc.status, tc.code, tc.field)
		}
		if tc.code != "" && got.Error.Message == "" {
			t.Errorf("%s %s: no message", tc.method, tc.path)
		}
	}
	var parsed wire.ErrorResponse
	call(t, ts, "POST", "/v1/templates/orders/parse", wire.NumberRequest{Number: "SN-0000000x-1"}, &parsed)
	if e := parsed.Error; e.Part != "seq" || e.Pos == nil || *e.Pos != 3 || e.Offset == nil {
		t.Errorf("an invalid number's part and positions: %+v", e)
	}
	// A closed Set: the server is going away.
	set.Close()
	var got wire.ErrorResponse
	if st, h := call(t, ts, "POST", "/v1/templates/orders/next", nil, &got); st != 503 || got.Error.Code != wire.CodeClosed || h.Get("Retry-After") == "" {
		t.Errorf("next on a closed Set: %d %+v", st, got.Error)
	}
	var health wire.Health
	if st, _ := call(t, ts, "GET", "/readyz", nil, &health); st != 503 || health.Ready || len(health.Stores) != 1 || health.Stores[0].OK {
		t.Errorf("readyz on a closed Set: %d %+v", st, health)
	}
}

func TestAuth(t *testing.T) {
	if _, err := server.New(new(config.Set), server.Options{Tokens: []string{"short"}}); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("a short token: %v", err)
	}
	ts, _ := start(t, server.Options{Tokens: []string{"another-token-of-32-bytes-length", testToken}})
	var e wire.ErrorResponse
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", testToken}, {"Authorization", "Basic " + testToken}} {
		if st, hdr := call(t, ts, "POST", "/v1/templates/orders/next", nil, &e, h...); st != 401 || e.Error.Code != wire.CodeUnauthorized || hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("header %v: %d %+v", h, st, e)
		}
	}
	var got wire.NextResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", nil, &got, "Authorization", "Bearer "+testToken); st != 200 || len(got.Numbers) != 1 {
		t.Errorf("with the token: %d %v", st, got)
	}
	// Probes need no token; the stores are told to a token that may
	// monitor.
	var health wire.Health
	if st, _ := call(t, ts, "GET", "/readyz", nil, &health); st != 200 || !health.Ready || len(health.Stores) != 0 {
		t.Errorf("readyz without a token: %d %+v", st, health)
	}
	if st, _ := call(t, ts, "GET", "/readyz", nil, &health, "Authorization", "Bearer "+testToken); st != 200 || !health.Ready || len(health.Stores) != 1 || !cmp.Equal(health.Stores[0].Templates, []string{"invoices", "orders", "tickets", "tiny"}) {
		t.Errorf("readyz: %d %+v", st, health)
	}
	if st, _ := call(t, ts, "GET", "/healthz", nil, nil); st != 200 {
		t.Errorf("healthz: %d", st)
	}
}

// The code of every sentinel a store or the engine returns.
func TestCodes(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   wire.Code
		status int
	}{
		{sequence.ErrUnavailable, wire.CodeUnavailable, 503},
		{fmt.Errorf("%w: %w", sequence.ErrUnavailable, sequence.ErrLeaseLost), wire.CodeLeaseLost, 503},
		{sequence.ErrClockRollback, wire.CodeClockRollback, 503},
		{sequence.ErrRegressed, wire.CodeRegressed, 503},
		{sequence.ErrExhausted, wire.CodeExhausted, 409},
		{sequence.ErrClosed, wire.CodeClosed, 503},
		{context.Canceled, wire.CodeCancelled, 499},
		{fmt.Errorf("%w: %w", sn.ErrTemplate, sn.ErrAmbiguous), wire.CodeAmbiguous, 500},
		{fmt.Errorf("disk on fire"), wire.CodeInternal, 500},
	} {
		code, status := wire.Classify(tc.err)
		if code != tc.code || status != tc.status {
			t.Errorf("%v: %s %d; want %s %d", tc.err, code, status, tc.code, tc.status)
		}
	}
}

// The numbers a request drew before it failed partway — a batch that
// outgrows the width — are never delivered: the journal records them
// void, with the request's error and its token, where it would say
// issued. A batch that succeeds is issued (the control).
func TestFailedBatchVoided(t *testing.T) {
	ts, set := startConfig(t, `
store: {backend: bolt, path: sn.db}
templates:
  small: {template: "S@<seq, width=1>"}
`, server.Options{Scoped: []server.Token{{ID: "app", Secret: testToken, Actions: server.Actions}}})
	auth := []string{"Authorization", "Bearer " + testToken}
	if st, _ := call(t, ts, "POST", "/v1/templates/small/next", wire.NextRequest{N: 3}, nil, auth...); st != 200 {
		t.Fatalf("a batch of 3: %d", st)
	}
	var e wire.ErrorResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/small/next", wire.NextRequest{N: 12}, &e, auth...); st != http.StatusConflict || e.Error.Code != wire.CodeOverflow {
		t.Fatalf("a batch past the width: %d %+v", st, e)
	}
	g, _ := set.Get("small")
	key, _ := g.Key(sn.Request{})
	j, err := g.Journal()
	if err != nil {
		t.Fatal(err)
	}
	events, head, err := journal.ReadJournal(t.Context(), j, key)
	if err != nil {
		t.Fatal(err)
	}
	// The states of S1 to S9, every number the template prints. (The
	// batch also drew values past the width, which print no number.)
	var got []string
	for _, sp := range journal.Audit(key, events, head, time.Now()).Spans {
		for v := sp.Range.First; v <= min(sp.Range.Last, 9); v++ {
			got = append(got, fmt.Sprintf("S%d %s", v, sp.State))
		}
		if sp.State == journal.Void && (!strings.Contains(sp.Event.Reason, "failed partway (overflow)") || sp.Event.Actor != "sn serve, token app") {
			t.Errorf("void %v: reason %q, actor %q", sp.Range, sp.Event.Reason, sp.Event.Actor)
		}
	}
	want := []string{"S1 issued", "S2 issued", "S3 issued", "S4 void", "S5 void", "S6 void", "S7 void", "S8 void", "S9 void"}
	if !slices.Equal(got, want) {
		t.Errorf("the journal says %q, want %q", got, want)
	}
}

// A template whose generator keeps no store for idempotency keys (a
// snowflake id with a fixed worker) cannot answer a retry that reaches
// another replica: a keyed request is refused, saying why; the same
// request without the key is served (the control).
func TestIdempotencyRefusedWithoutStore(t *testing.T) {
	ts, _ := startConfig(t, "templates:\n  ids: {template: \"ID@<seq>\", sequence: {backend: snowflake, worker: 3, single_process: true}}\n", server.Options{})
	var e wire.ErrorResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/ids/next", nil, &e, "Idempotency-Key", "k1"); st != 400 || !strings.Contains(e.Error.Message, "keeps no idempotency keys") {
		t.Errorf("a keyed request: %d %+v", st, e)
	}
	var got wire.NextResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/ids/next", nil, &got); st != 200 || len(got.Numbers) != 1 {
		t.Errorf("control, without the key: %d %v", st, got.Numbers)
	}
}
