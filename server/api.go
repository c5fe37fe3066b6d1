package server

import (
	"time"

	"github.com/sngen/sn"
)

// The bodies of requests and responses, as JSON.

// NextRequest asks for numbers: POST /v1/templates/{name}/next, and
// /preview for samples that draw nothing.
type NextRequest struct {
	// N is how many numbers, 1 to sn.MaxN; 0 means 1.
	N int `json:"n,omitempty"`
	// Vars are the per-call variables.
	Vars map[string]string `json:"vars,omitempty"`
	// At is the document's instant, RFC 3339; "" means the server's
	// clock.
	At string `json:"at,omitempty"`
}

// NextResponse is the numbers issued, in order.
type NextResponse struct {
	Numbers []string `json:"numbers"`
}

// NumberRequest names a number to validate or parse: POST
// /v1/templates/{name}/validate and /parse.
type NumberRequest struct {
	Number string `json:"number"`
}

// ValidateResponse says whether a number is one the template prints. An
// invalid number is not an error of the request: Valid is false and Error
// says why (code invalid_number, with the part and positions).
type ValidateResponse struct {
	Valid bool   `json:"valid"`
	Error *Error `json:"error,omitempty"`
}

// ParseResponse is a number read back: sn.Parsed.
type ParseResponse struct {
	Key   string            `json:"key"`
	Seq   int64             `json:"seq"`
	Vars  map[string]string `json:"vars,omitempty"`
	Draws []Draw            `json:"draws"`
}

// Draw is the counter key and number of one sequence part: sn.Draw.
type Draw struct {
	Part   string `json:"part"`
	Offset int    `json:"offset"`
	Key    string `json:"key"`
	Seq    int64  `json:"seq"`
}

// Template describes one template: GET /v1/templates lists them, GET
// /v1/templates/{name} gives one with its parts (sn.Explanation).
type Template struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	MaxLen   int    `json:"max_len"`
	Regexp   string `json:"regexp"`
	Parts    []Part `json:"parts,omitempty"`
}

// Part is one part of a template: sn.PartInfo.
type Part struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Offset  int    `json:"offset"`
	Order   string `json:"order"`
	MaxLen  int    `json:"max_len"`
	Pattern string `json:"pattern"`
	Key     string `json:"key,omitempty"`
}

// TemplatesResponse lists the templates, by name.
type TemplatesResponse struct {
	Templates []Template `json:"templates"`
}

// Health is the answer of GET /readyz: ready when every store answers.
type Health struct {
	Ready  bool          `json:"ready"`
	Stores []StoreHealth `json:"stores"`
}

// StoreHealth is one store's answer.
type StoreHealth struct {
	// Store says where the numbers are kept (passwords hidden).
	Store string `json:"store"`
	// Templates are the templates whose numbers come from the store.
	Templates []string `json:"templates"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error,omitempty"`
	// Millis is how long the store took to answer.
	Millis float64 `json:"millis"`
}

// ErrorResponse is the body of every response whose status is not 2xx.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error is an error of a request: a stable Code (see [Code]), a message
// for people and, where they apply, the field of the request at fault and,
// for an invalid number, the template part and positions.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Part is the template part an invalid number does not match, Offset
	// its byte offset in the template, and Pos the byte offset in the
	// number where the problem starts.
	Part   string `json:"part,omitempty"`
	Offset *int   `json:"offset,omitempty"`
	Pos    *int   `json:"pos,omitempty"`
}

func parseResponse(p sn.Parsed) ParseResponse {
	out := ParseResponse{Key: p.Key, Seq: p.Seq, Vars: p.Vars, Draws: make([]Draw, len(p.Draws))}
	for i, d := range p.Draws {
		out.Draws[i] = Draw(d)
	}
	return out
}

func templateOf(name string, e sn.Explanation, parts bool) Template {
	t := Template{Name: name, Template: e.Template, MaxLen: e.MaxLen, Regexp: e.Regexp}
	if parts {
		for _, p := range e.Parts {
			t.Parts = append(t.Parts, Part{Source: p.Source, Name: p.Name, Kind: p.Kind, Offset: p.Offset,
				Order: p.Order.String(), MaxLen: p.MaxLen, Pattern: p.Pattern, Key: p.Key})
		}
	}
	return t
}

// instant reads NextRequest.At.
func instant(at string) (time.Time, error) {
	if at == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, at)
}
