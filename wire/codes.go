package wire

import (
	"context"
	"errors"
	"net/http"

	"github.com/sngen/sn/internal/sentinel"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// Code is the stable name of an error of a request, in
// ErrorResponse.Error.Code. Clients branch on it, never on the message.
type Code string

// The codes, with the HTTP status each comes with.
const (
	CodeBadRequest    Code = "bad_request"     // 400: the body is not the JSON asked for; Field says where
	CodeVarMissing    Code = "var_missing"     // 400: a per-call variable is missing (sn.ErrVarMissing); Field is vars.NAME
	CodeVarInvalid    Code = "var_invalid"     // 400: a per-call variable is invalid (sn.ErrVarInvalid); Field is vars.NAME
	CodeInstant       Code = "instant_invalid" // 400: at is not RFC 3339, or a date part cannot print it (sn.ErrInstant)
	CodeTooMany       Code = "too_many"        // 400: n is above sn.MaxN (sn.ErrTooMany) or below 0
	CodeUnauthorized  Code = "unauthorized"    // 401: no bearer token, or not one the server knows
	CodeForbidden     Code = "forbidden"       // 403: an action outside the token's scope, a cross-site request from a browser, or, without tokens, a Host that is not a loopback name
	CodeNotFound      Code = "not_found"       // 404: no such template, or no such path
	CodeMethod        Code = "method_not_allowed"
	CodeTooLarge      Code = "too_large"              // 413: the body (or the header, 431) is over the server's limit
	CodeMediaType     Code = "unsupported_media_type" // 415: a POST whose Content-Type is not application/json
	CodeInvalidNumber Code = "invalid_number"         // 422: parse of a number the template does not print (sn.ErrInvalidNumber)
	CodeOverflow      Code = "overflow"               // 409: the counter has outgrown the template's width (sn.ErrOverflow)
	CodeExhausted     Code = "exhausted"              // 409: the sequence has no numbers left (sequence.ErrExhausted)
	CodeUnavailable   Code = "unavailable"            // 503: the store does not answer (sequence.ErrUnavailable); retry
	CodeClockRollback Code = "clock_rollback"         // 503: the clock went back past what was issued (sequence.ErrClockRollback)
	CodeLeaseLost     Code = "lease_lost"             // 503: the worker id's lease is lost (sequence.ErrLeaseLost)
	CodeRegressed     Code = "regressed"              // 503: the store went backwards (sequence.ErrRegressed, journal.ErrBehind): nothing is issued from it
	CodeClosed        Code = "closed"                 // 503: the server is shutting down (sequence.ErrClosed)
	CodeCancelled     Code = "cancelled"              // 499: the client went away or the request timed out
	CodeAmbiguous     Code = "ambiguous"              // 500: the template can print one string twice (sn.ErrAmbiguous); sn serve refuses such a template at start, so it never answers this
	CodeInternal      Code = "internal"               // 500: a panic or an error the server did not expect
	CodeConflict      Code = "idempotency_conflict"   // 422: the Idempotency-Key was used with another request (sn.ErrIdempotencyConflict)
	CodeInProgress    Code = "in_progress"            // 409: the Idempotency-Key's first request is under way (sn.ErrInProgress); retry
	CodeInvalid       Code = "invalid_argument"       // 400: an argument the store refuses, such as a void of a number not issued yet (sequence.ErrInvalidArgument)
	CodeUnsupported   Code = "unsupported"            // 501: the template's store cannot do it, such as keep a journal (errors.ErrUnsupported)
	CodeMismatch      Code = "mismatch"               // 409: a block asked for with another template text or engine than the server's
	CodeClockSkew     Code = "clock_skew"             // 409: a block asked for by a client whose clock is more than MaxClockSkew from the server's
)

// StatusCancelled is the status of a request whose client went away or
// that timed out, as nginx answers it.
const StatusCancelled = 499

// codes is the table between the codes, their statuses and sentinels, the
// specific before the general: Classify takes the first row whose err the
// error wraps.
var codes = []struct {
	code   Code
	status int
	err    error // the sentinel that makes an error of the code; nil for a fault of the request's form
	match  error // the sentinel an answer of the code matches at a client (Code.Err)
}{
	{CodeAmbiguous, http.StatusInternalServerError, sentinel.Ambiguous, sentinel.Ambiguous},
	{CodeVarMissing, http.StatusBadRequest, sentinel.VarMissing, sentinel.VarMissing},
	{CodeVarInvalid, http.StatusBadRequest, sentinel.VarInvalid, sentinel.VarInvalid},
	{CodeInstant, http.StatusBadRequest, sentinel.Instant, sentinel.Instant},
	{CodeTooMany, http.StatusBadRequest, sentinel.TooMany, sentinel.TooMany},
	{CodeInvalidNumber, http.StatusUnprocessableEntity, sentinel.InvalidNumber, sentinel.InvalidNumber},
	{CodeOverflow, http.StatusConflict, sentinel.Overflow, sentinel.Overflow},
	{CodeExhausted, http.StatusConflict, sequence.ErrExhausted, sequence.ErrExhausted},
	{CodeClockRollback, http.StatusServiceUnavailable, sequence.ErrClockRollback, sequence.ErrClockRollback},
	{CodeLeaseLost, http.StatusServiceUnavailable, sequence.ErrLeaseLost, sequence.ErrLeaseLost},
	{CodeRegressed, http.StatusServiceUnavailable, sequence.ErrRegressed, sequence.ErrRegressed},
	{CodeRegressed, http.StatusServiceUnavailable, journal.ErrBehind, sequence.ErrRegressed},
	// The server is going away: to its client, the service is unavailable
	// and another server may answer.
	{CodeClosed, http.StatusServiceUnavailable, sequence.ErrClosed, sequence.ErrUnavailable},
	{CodeUnavailable, http.StatusServiceUnavailable, sequence.ErrUnavailable, sequence.ErrUnavailable},
	{CodeConflict, http.StatusUnprocessableEntity, sentinel.Conflict, sentinel.Conflict},
	{CodeInProgress, http.StatusConflict, sentinel.InProgress, sentinel.InProgress},
	{CodeInvalid, http.StatusBadRequest, sequence.ErrInvalidArgument, sequence.ErrInvalidArgument},
	{CodeUnsupported, http.StatusNotImplemented, errors.ErrUnsupported, errors.ErrUnsupported},
	{CodeCancelled, StatusCancelled, context.Canceled, nil},
	{CodeCancelled, StatusCancelled, context.DeadlineExceeded, nil},
	{CodeMismatch, http.StatusConflict, nil, nil},
	{CodeClockSkew, http.StatusConflict, nil, nil},
	{CodeBadRequest, http.StatusBadRequest, nil, nil},
	{CodeUnauthorized, http.StatusUnauthorized, nil, nil},
	{CodeForbidden, http.StatusForbidden, nil, nil},
	{CodeNotFound, http.StatusNotFound, nil, nil},
	{CodeMethod, http.StatusMethodNotAllowed, nil, nil},
	{CodeTooLarge, http.StatusRequestEntityTooLarge, nil, nil},
	{CodeMediaType, http.StatusUnsupportedMediaType, nil, nil},
	{CodeInternal, http.StatusInternalServerError, nil, nil},
}

// Classify gives err's code and HTTP status, from the sentinels it wraps:
// [CodeInternal] for an error that wraps none of them.
func Classify(err error) (Code, int) {
	if e, ok := errors.AsType[Error](err); ok && e.Code != "" {
		return e.Code, e.Code.Status() // the server's own answer (sn.Generator.Refuse)
	}
	for _, c := range codes {
		if c.err != nil && matches(err, c.err) {
			return c.code, c.status
		}
	}
	return CodeInternal, http.StatusInternalServerError
}

// Status returns the HTTP status an answer with code c comes with; 500
// for a code this package does not know.
func (c Code) Status() int {
	for _, row := range codes {
		if row.code == c {
			return row.status
		}
	}
	return http.StatusInternalServerError
}

// Err returns the sentinel error of package sn or sequence that an answer
// with code c stands for, which a client's error wraps: sn.ErrVarMissing
// for var_missing, sequence.ErrUnavailable for unavailable and closed.
// It returns nil for the codes of a request's form (bad_request,
// unauthorized, not_found...) and for cancelled and internal.
func (c Code) Err() error {
	for _, row := range codes {
		if row.code == c {
			if k, ok := row.match.(sentinel.Kind); ok {
				return k.Public()
			}
			return row.match
		}
	}
	return nil
}

// matches reports whether err wraps sentinel, which for one of package
// sn's is either its kind (from the engine) or sn's value.
func matches(err, target error) bool {
	if k, ok := target.(sentinel.Kind); ok {
		return sentinel.Matches(err, k)
	}
	return errors.Is(err, target)
}
