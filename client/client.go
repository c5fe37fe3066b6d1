// Package client talks to a remote sn serve, with the surface of an
// sn.Generator: a Go program uses a shared numbering service as it would
// use the library, and its errors match the same sentinels
// (errors.Is(err, sn.ErrVarMissing), errors.Is(err, sequence.ErrUnavailable)).
//
//	c, err := client.New("https://sn.internal:8080", client.Options{Token: os.Getenv("SN_TOKEN")})
//	orders := c.Generator("orders")
//	nums, err := orders.Issue(ctx, client.Request{Vars: map[string]string{"customer": "ACME"}})
//
// Every call that issues numbers carries an Idempotency-Key: the one the
// [Request] gives, or a new random one per call. So the client sends it
// again, with the same key, when the connection failed or timed out
// before an answer, and when the server answered 503 (unavailable, after
// its Retry-After) or 409 in_progress: up to [Options.Retries] times,
// within the caller's context. The server answers a retry with the
// numbers the first request was given, never new ones, so a logical call
// ends with one set of numbers. A caller that calls Issue again itself
// gets new numbers, unless it gives the same IdempotencyKey.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sngen/sn/internal/batchjson"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/wire"
)

// Options configure a [Client].
type Options struct {
	// Token is the bearer token, one of the server's SN_TOKENS; "" for a
	// server without tokens.
	Token string
	// HTTPClient sends the requests; nil means a client with a 30 s
	// timeout.
	HTTPClient *http.Client
	// Retries is how many times a call that issues numbers is sent again
	// after a failed connection, a timeout, a 503 or a 409 in_progress,
	// with its Idempotency-Key; 0 means 8, -1 never. The pause between
	// tries starts at 50ms and doubles up to 2s, or is the server's
	// Retry-After.
	Retries int
}

// Client is a connection to one sn serve. It is safe for concurrent use.
type Client struct {
	base    string
	token   string
	http    *http.Client
	retries int
}

// New returns a Client of the server at baseURL, such as
// "http://127.0.0.1:8080".
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http://host:port or https://host:port", baseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	retries := opts.Retries
	switch {
	case retries == 0:
		retries = 8
	case retries < 0:
		retries = 0
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), token: opts.Token, http: hc, retries: retries}, nil
}

// Template returns the template named name on the wire. Nothing is
// asked of the server until a method is called.
func (c *Client) Generator(name string) *Generator {
	return &Generator{c: c, path: "/v1/templates/" + url.PathEscape(name)}
}

// Templates lists the server's templates.
func (c *Client) Templates(ctx context.Context) ([]wire.TemplateInfo, error) {
	var out wire.TemplatesResponse
	err := c.do(ctx, http.MethodGet, "/v1/templates", nil, &out)
	return out.Templates, err
}

// Ready reports the health of the server's stores; the error is nil only
// when every store answers.
func (c *Client) Ready(ctx context.Context) (wire.Health, error) {
	var h wire.Health
	err := c.do(ctx, http.MethodGet, "/readyz", nil, &h)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusServiceUnavailable && len(h.Stores) > 0 {
		return h, fmt.Errorf("client: not ready: %w", sequence.ErrUnavailable)
	}
	return h, err
}

// Generator is the Generator of one template of a server, with the
// issuing methods of sn.Generator: Next, Issue and Preview, taking a
// [Request] as sn.Generator's take an sn.Request. (sn.Generator.Append has no
// counterpart: reading an answer allocates anyway.)
type Generator struct {
	c    *Client
	path string
}

// Request is sn.Request over the network: what one call asks for. The
// zero Request asks for one number, at the server's clock, with no
// variables.
type Request struct {
	// N is how many numbers to issue, at most sn.MaxN; 0 means one.
	N int
	// At is the instant the numbers are for (a document's own date); the
	// zero At means the server's clock.
	At time.Time
	// Vars are the per-call variables.
	Vars map[string]string
	// IdempotencyKey is sent as the Idempotency-Key header of the call,
	// and of its retries: a call again with the same key, within the
	// server's window (24 hours), answers the same numbers. "" means a
	// new random key per call, good for the client's own retries.
	IdempotencyKey string
}

// Next returns the next number: [Generator.Issue] of the zero [Request].
func (t *Generator) Next(ctx context.Context) (string, error) {
	nums, err := t.numbers(ctx, "/next", Request{})
	if err != nil {
		return "", err
	}
	return nums[0], nil
}

// Issue issues the numbers r asks for, in one request.
func (t *Generator) Issue(ctx context.Context, r Request) ([]string, error) {
	return t.numbers(ctx, "/next", r)
}

// Preview returns the sample numbers r asks for, drawing nothing.
func (t *Generator) Preview(ctx context.Context, r Request) ([]string, error) {
	return t.numbers(ctx, "/preview", r)
}

func (t *Generator) numbers(ctx context.Context, op string, r Request) ([]string, error) {
	req := wire.NextRequest{N: r.N, Vars: r.Vars}
	if r.N == 0 {
		req.N = 1
	}
	if !r.At.IsZero() {
		req.At = r.At.Format(time.RFC3339Nano)
	}
	var out wire.NextResponse
	if op == "/next" {
		key := r.IdempotencyKey
		if key == "" {
			key = newKey()
		}
		if err := t.c.retry(ctx, t.path+op, key, req, &out); err != nil {
			return nil, err
		}
	} else if err := t.c.do(ctx, http.MethodPost, t.path+op, req, &out); err != nil {
		return nil, err
	}
	if len(out.Numbers) != req.N {
		return nil, fmt.Errorf("client: %s%s: %d numbers, want %d", t.path, op, len(out.Numbers), req.N)
	}
	return out.Numbers, nil
}

// Validate returns nil if s is a number the template prints, and
// otherwise an *Error wrapping sn.ErrInvalidNumber.
func (t *Generator) Validate(ctx context.Context, s string) error {
	var out wire.ValidateResponse
	if err := t.c.do(ctx, http.MethodPost, t.path+"/validate", wire.NumberRequest{Number: s}, &out); err != nil {
		return err
	}
	if !out.Valid {
		if out.Error == nil {
			return newError(http.StatusOK, wire.Error{Code: wire.CodeInvalidNumber, Message: "invalid number"})
		}
		return newError(http.StatusOK, *out.Error)
	}
	return nil
}

// Parse reads s back: its counter key, number and variables, as
// sn.Generator.Parse does.
func (t *Generator) Parse(ctx context.Context, s string) (wire.ParseResponse, error) {
	var out wire.ParseResponse
	err := t.c.do(ctx, http.MethodPost, t.path+"/parse", wire.NumberRequest{Number: s}, &out)
	return out, err
}

// Explain returns the template with its parts.
func (t *Generator) Explain(ctx context.Context) (wire.TemplateInfo, error) {
	var out wire.TemplateInfo
	err := t.c.do(ctx, http.MethodGet, t.path, nil, &out)
	return out, err
}

// Void records s, a number the template printed, as void with reason in
// its counter's journal.
func (t *Generator) Void(ctx context.Context, s, reason string) error {
	var out wire.VoidResponse
	return t.c.do(ctx, http.MethodPost, t.path+"/void", wire.VoidRequest{Number: s, Reason: reason}, &out)
}

// Hold holds the next number of a gapless template for r, for ttl, as
// sn.Generator.Hold does, and returns it with its deadline; r.N is
// ignored. Commit it, or Void it, by the deadline. It is retried like Issue, with
// r.IdempotencyKey or a key of its own, so that a retry gets the same
// hold.
func (t *Generator) Hold(ctx context.Context, r Request, ttl time.Duration) (wire.HoldResponse, error) {
	req := wire.HoldRequest{Vars: r.Vars, TTL: ttl.String()}
	if !r.At.IsZero() {
		req.At = r.At.Format(time.RFC3339Nano)
	}
	key := r.IdempotencyKey
	if key == "" {
		key = newKey()
	}
	var out wire.HoldResponse
	err := t.c.retry(ctx, t.path+"/hold", key, req, &out)
	return out, err
}

// Commit makes s, a number the template held, final.
func (t *Generator) Commit(ctx context.Context, s string) error {
	var out wire.CommitResponse
	return t.c.do(ctx, http.MethodPost, t.path+"/commit", wire.CommitRequest{Number: s}, &out)
}

// newKey returns a random idempotency key: 32 hexadecimal digits.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retry sends a POST with an Idempotency-Key, and again, with the same
// key, after a failed connection, a timeout, a 503 or a 409 in_progress,
// up to c.retries times within ctx.
func (c *Client) retry(ctx context.Context, path, key string, body, out any) error {
	return c.retryWith(ctx, path, key, func() any { return body }, out)
}

// retryWith is retry with a body made anew for each try.
func (c *Client) retryWith(ctx context.Context, path, key string, body func() any, out any) error {
	wait := 50 * time.Millisecond
	for try := 0; ; try++ {
		err := c.send(ctx, http.MethodPost, path, key, body(), out)
		if err == nil || try >= c.retries || ctx.Err() != nil {
			return err
		}
		var e *Error
		pause := wait
		switch {
		case errors.As(err, &e) && (e.Status == http.StatusServiceUnavailable || e.Code == wire.CodeInProgress):
			if e.retryAfter > 0 {
				pause = min(e.retryAfter, 5*time.Second)
			}
		case errors.As(err, &e):
			return err // an answer: not the network's fault
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// do sends a request with body as JSON and decodes the answer into out.
// A response that is not 2xx is an *Error; out is still decoded when the
// body has its shape (readyz).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	return c.send(ctx, method, path, "", body, out)
}

// send is do with an Idempotency-Key, when key is not "".
func (c *Client) send(ctx context.Context, method, path, key string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return fmt.Errorf("client: %w", err)
		}
	}
	// A request that meets a connection the server is closing (a
	// keep-alive connection it closed as idle, or at shutdown) is sent
	// again, on a new connection (at most four times). For next that costs at most a gap:
	// if the server issued numbers for the first, they are never seen.
	var resp *http.Response
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json") // the server refuses a POST without it
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err = c.http.Do(req)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
		}
		if try < 4 && connectionLost(err) {
			// Its other idle connections are likely closing too: the
			// next try dials a new one.
			c.http.CloseIdleConnections()
			continue
		}
		return fmt.Errorf("client: %s %s: %w: %w", method, path, sequence.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	buf := answers.Get().(*[]byte)
	defer answers.Put(buf)
	data, err := readAll(resp, buf)
	if err != nil {
		return fmt.Errorf("client: %s %s: reading the answer: %w: %w", method, path, sequence.ErrUnavailable, err)
	}
	if nr, ok := out.(*wire.NextResponse); ok && resp.StatusCode == http.StatusOK {
		if nums, ok := batchjson.Read(data); ok {
			nr.Numbers = nums
			return nil
		}
	}
	if resp.StatusCode/100 == 2 || (path == "/readyz" && resp.StatusCode == http.StatusServiceUnavailable) {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("client: %s %s: the answer is not what sn serve sends: %w", method, path, err)
		}
		if resp.StatusCode/100 == 2 {
			return nil
		}
	}
	var er wire.ErrorResponse
	if json.Unmarshal(data, &er) != nil || er.Error.Code == "" {
		// Not sn serve's answer: a proxy's. One that says the service is
		// down or slow (502, 503, 504) is unavailable, which a caller may
		// retry elsewhere.
		code := wire.CodeInternal
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			code = wire.CodeUnavailable
		}
		er.Error = wire.Error{Code: code, Message: fmt.Sprintf("%s %s: status %d: %.200s", method, path, resp.StatusCode, data)}
	}
	e := newError(resp.StatusCode, er.Error)
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.retryAfter = time.Duration(s) * time.Second
	}
	return e
}

// connectionLost reports whether err is a connection that ended before an
// answer came: the server closed it (EOF, a reset), not a connection
// refused or a timeout.
func connectionLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// Error is an error answer of the server: its status, and the code,
// message and field it sent. It wraps the sentinel of its code, so that
// errors.Is works as with the library: var_missing is sn.ErrVarMissing,
// unavailable is sequence.ErrUnavailable, and so on.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code, Message, Field, Part, Offset and Pos are as the server sent
	// them: see wire.Error.
	Code    wire.Code
	Message string
	Field   string
	Part    string
	Offset  *int
	Pos     *int

	retryAfter time.Duration // the server's Retry-After
}

func newError(status int, e wire.Error) *Error {
	return &Error{Status: status, Code: e.Code, Message: e.Message, Field: e.Field, Part: e.Part, Offset: e.Offset, Pos: e.Pos}
}

// Error returns the server's message with its code and field.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("sn serve: %s (%s, field %s)", e.Message, e.Code, e.Field)
	}
	return fmt.Sprintf("sn serve: %s (%s)", e.Message, e.Code)
}

// Unwrap returns the sentinel of the code, if it has one (see
// wire.Code.Err).
func (e *Error) Unwrap() error { return e.Code.Err() }

// maxAnswer bounds the answer the client reads.
const maxAnswer = 64 << 20

// readAll reads the answer's body into *buf, which it may grow; what it
// returns is only valid until *buf is used again.
func readAll(resp *http.Response, buf *[]byte) ([]byte, error) {
	b := (*buf)[:0]
	// Trust a told length up to 1 MiB, a batch of about 60,000 numbers;
	// beyond, the buffer grows with what arrives.
	if n := resp.ContentLength; n >= int64(cap(b)) && n < 1<<20 {
		b = make([]byte, 0, n+1) // the byte more finds the end without growing
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		k, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if len(b) > maxAnswer {
			return nil, fmt.Errorf("an answer over %d bytes", maxAnswer)
		}
		if err == io.EOF {
			if cap(b) <= 1<<20 {
				*buf = b // kept for the next answer
			}
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// answers are the buffers the answers are read into.
var answers = sync.Pool{New: func() any { return new([]byte) }}
