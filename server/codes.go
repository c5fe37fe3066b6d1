package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
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
	CodeForbidden     Code = "forbidden"       // 403: a cross-site request from a browser, or, without tokens, a Host that is not a loopback name
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
	CodeRegressed     Code = "regressed"              // 503: the store went backwards (sequence.ErrRegressed): nothing is issued from it
	CodeClosed        Code = "closed"                 // 503: the server is shutting down (sequence.ErrClosed)
	CodeCancelled     Code = "cancelled"              // 499: the client went away or the request timed out
	CodeAmbiguous     Code = "ambiguous"              // 500: the template can print one string twice (sn.ErrAmbiguous); sn serve refuses such a template at start, so it never answers this
	CodeInternal      Code = "internal"               // 500: a panic or an error the server did not expect
)

// statusCancelled is the status of a request whose client went away.
const statusCancelled = 499

// Classify gives err's code and HTTP status, from the sentinels it wraps.
// The first match wins: the order puts the specific before the general.
func Classify(err error) (Code, int) {
	for _, c := range []struct {
		target error
		code   Code
		status int
	}{
		{sn.ErrAmbiguous, CodeAmbiguous, http.StatusInternalServerError},
		{sn.ErrVarMissing, CodeVarMissing, http.StatusBadRequest},
		{sn.ErrVarInvalid, CodeVarInvalid, http.StatusBadRequest},
		{sn.ErrInstant, CodeInstant, http.StatusBadRequest},
		{sn.ErrTooMany, CodeTooMany, http.StatusBadRequest},
		{sn.ErrInvalidNumber, CodeInvalidNumber, http.StatusUnprocessableEntity},
		{sn.ErrOverflow, CodeOverflow, http.StatusConflict},
		{sequence.ErrExhausted, CodeExhausted, http.StatusConflict},
		{sequence.ErrClockRollback, CodeClockRollback, http.StatusServiceUnavailable},
		{sequence.ErrLeaseLost, CodeLeaseLost, http.StatusServiceUnavailable},
		{sequence.ErrRegressed, CodeRegressed, http.StatusServiceUnavailable},
		{sequence.ErrClosed, CodeClosed, http.StatusServiceUnavailable},
		{sequence.ErrUnavailable, CodeUnavailable, http.StatusServiceUnavailable},
		{context.Canceled, CodeCancelled, statusCancelled},
		{context.DeadlineExceeded, CodeCancelled, statusCancelled},
	} {
		if errors.Is(err, c.target) {
			return c.code, c.status
		}
	}
	return CodeInternal, http.StatusInternalServerError
}

// errorOf turns err into the Error of a response, and its status.
func errorOf(err error) (Error, int) {
	code, status := Classify(err)
	e := Error{Code: code, Message: err.Error()}
	var ve *sn.VarError
	if errors.As(err, &ve) {
		e.Field = "vars." + ve.Name
	}
	var ne *sn.ValidationError
	if errors.As(err, &ne) {
		e.Field = "number"
		if ne.Part != "" {
			e.Part, e.Offset = ne.Part, &ne.Offset
		}
		e.Pos = &ne.Pos
	}
	if code == CodeInstant {
		e.Field = "at"
	}
	if code == CodeTooMany {
		e.Field = "n"
	}
	return e, status
}

// statuses are the HTTP statuses of the codes.
var statuses = map[Code]int{
	CodeBadRequest: 400, CodeVarMissing: 400, CodeVarInvalid: 400, CodeInstant: 400, CodeTooMany: 400,
	CodeUnauthorized: 401, CodeForbidden: 403, CodeNotFound: 404, CodeMethod: 405, CodeTooLarge: 413,
	CodeMediaType: 415, CodeInvalidNumber: 422, CodeOverflow: 409, CodeExhausted: 409,
	CodeUnavailable: 503, CodeClockRollback: 503, CodeLeaseLost: 503, CodeRegressed: 503, CodeClosed: 503,
	CodeCancelled: statusCancelled, CodeAmbiguous: 500, CodeInternal: 500,
}

// Status returns the HTTP status a response with code c comes with; 500
// for a code this package does not know.
func (c Code) Status() int {
	if st, ok := statuses[c]; ok {
		return st
	}
	return http.StatusInternalServerError
}
