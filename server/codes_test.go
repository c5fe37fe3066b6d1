package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// failNext is the error the failing backend's sequence returns; nil
// issues from memory.
var failNext atomic.Pointer[error]

// failDriver is a backend whose sequence fails with failNext.
type failDriver struct{}

func (failDriver) Check(t *config.Target) (config.StoreInfo, error) {
	return config.StoreInfo{Durable: true, ID: "fail"}, nil
}

func (failDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	return failGen{sequence.NewMemory()}, nil
}

type failGen struct{ m *sequence.Memory }

func (g failGen) Next(ctx context.Context, key string) (int64, error) {
	if err := failNext.Load(); err != nil {
		return 0, *err
	}
	return g.m.Next(ctx, key)
}

func init() { config.Register("fail-test", failDriver{}) }

// panicking is an expression that panics, a bug in a user's code.
type panicking struct{}

func (panicking) Append(dst []byte, c *expression.Context) ([]byte, error) {
	panic("a bug in an expression")
}
func (panicking) Order() expression.Order { return expression.Before }
func (panicking) MaxLen() int             { return 3 }

// Each error of a store, and a panic in a part, comes out of POST next
// with its code and status, and 503s with Retry-After.
func TestStoreErrorCodes(t *testing.T) {
	cfg, err := config.Decode([]byte(`
store: {backend: fail-test}
templates:
  orders: {template: "SN-@<seq, width=8>"}
  buggy:  {template: "B-@<seq>-@<bug>"}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	bugs := sn.NewRegistry()
	bugs.RegisterExpression("bug", func(expression.Args) (expression.Expression, error) { return panicking{}, nil })
	set, err := cfg.Build(t.Context(), config.WithOptions(sn.WithRegistry(bugs)))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	h, err := server.New(set, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, tc := range []struct {
		err    error
		code   wire.Code
		status int
		retry  string // Retry-After of a 503
	}{
		{fmt.Errorf("%w: connection refused", sequence.ErrUnavailable), wire.CodeUnavailable, 503, "1"},
		{fmt.Errorf("%w: worker 3", sequence.ErrLeaseLost), wire.CodeLeaseLost, 503, "1"},
		{fmt.Errorf("%w: 2 s", sequence.ErrClockRollback), wire.CodeClockRollback, 503, "1"},
		{sequence.RetryAfter(fmt.Errorf("%w: 90.5 s behind", sequence.ErrClockRollback), 90500*time.Millisecond), wire.CodeClockRollback, 503, "91"},
		{fmt.Errorf("%w: 100 below 200", sequence.ErrRegressed), wire.CodeRegressed, 503, "1"},
		{sequence.ErrClosed, wire.CodeClosed, 503, "1"},
		{fmt.Errorf("%w: at its maximum", sequence.ErrExhausted), wire.CodeExhausted, 409, ""},
		{context.Canceled, wire.CodeCancelled, 499, ""},
		{errors.New("disk on fire"), wire.CodeInternal, 500, ""},
	} {
		failNext.Store(&tc.err)
		var e wire.ErrorResponse
		st, hdr := call(t, ts, "POST", "/v1/templates/orders/next", wire.NextRequest{N: 2}, &e)
		if st != tc.status || e.Error.Code != tc.code {
			t.Errorf("%v: %d %s; want %d %s", tc.err, st, e.Error.Code, tc.status, tc.code)
		}
		if retry := hdr.Get("Retry-After"); retry != tc.retry {
			t.Errorf("%v: status %d, Retry-After %q, want %q", tc.err, st, retry, tc.retry)
		}
	}
	failNext.Store(nil)
	var e wire.ErrorResponse
	for _, n := range []int{0, 5} { // one number, and a batch (printed into JSON)
		if st, _ := call(t, ts, "POST", "/v1/templates/buggy/next", wire.NextRequest{N: n}, &e); st != 500 || e.Error.Code != wire.CodeInternal {
			t.Errorf("a panicking expression, n %d: %d %+v; want 500 internal", n, st, e)
		}
	}
	var ok wire.NextResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/next", nil, &ok); st != 200 || len(ok.Numbers) != 1 {
		t.Errorf("after the failures: %d %+v", st, ok)
	}
}
