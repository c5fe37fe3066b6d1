package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/wire"
)

// blockSource is where the blocks of one template come from: the store's
// Allocator beneath the template's Segment.
type blockSource struct {
	alloc sequence.Allocator
	max   int64  // the largest block
	why   string // when alloc is nil, why the template hands out no blocks
}

// sourceOf finds the blocks of template g, whose sequence is seq.
func sourceOf(g *sn.Generator, seq sequence.Gen) blockSource {
	if err := g.Portable(); err != nil {
		return blockSource{why: err.Error()}
	}
	var src blockSource
	why := "its store hands out numbers one at a time, not blocks"
	sequence.Walk(seq, func(gen sequence.Gen) {
		switch gen := gen.(type) {
		case *sequence.Balanced:
			why = "its numbers are balanced over several stores, each marking its own: only the service prints them"
		case *snowflake.Gen:
			why = "its numbers are snowflake ids, drawn from a clock, not blocks"
		case *sequence.Segment:
			if src.alloc == nil {
				src = blockSource{alloc: gen.Allocator(), max: gen.Options().MaxStep}
			}
		}
	})
	if why != "its store hands out numbers one at a time, not blocks" || src.alloc == nil {
		return blockSource{why: why}
	}
	return src
}

// blocks hands out a block of one counter of the template: POST
// /v1/templates/{name}/blocks.
func (s *Server) blocks(w http.ResponseWriter, r *http.Request) {
	name, g, ok := s.generator(w, r, Issue)
	if !ok {
		return
	}
	var req wire.BlockRequest
	if _, code := s.decode(w, r, &req); code != "" {
		return
	}
	src := s.sources[name]
	if src.alloc == nil {
		s.error(w, fmt.Errorf("template %s hands out no blocks: %s: %w", quote(name), src.why, errors.ErrUnsupported))
		return
	}
	switch {
	case req.Template != g.String():
		s.fail(w, wire.Error{Code: wire.CodeMismatch, Field: "template", Message: fmt.Sprintf("template: the client renders %s, and template %s is %s: fetch it again (GET /v1/templates/%s)", quote(req.Template), quote(name), quote(g.String()), name)}, http.StatusConflict)
		return
	case req.Engine != sn.Engine():
		s.fail(w, wire.Error{Code: wire.CodeMismatch, Field: "engine", Message: fmt.Sprintf("engine: the client's sn renders numbers as %s, the server's as %s: the numbers could differ; build the client with the server's version of sn", quote(req.Engine), sn.Engine())}, http.StatusConflict)
		return
	case req.N < 1 || req.N > src.max:
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: "n", Message: fmt.Sprintf("n %d: want a block of 1 to %d numbers (the template's max_block)", req.N, src.max)}, http.StatusBadRequest)
		return
	case len(req.Client) > 200 || !utf8.ValidString(req.Client) || !printable(req.Client):
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: "client", Message: "client: want at most 200 bytes of printable UTF-8 naming the client process (no control characters: the journal keeps it)"}, http.StatusBadRequest)
		return
	}
	now, err := time.Parse(time.RFC3339Nano, req.Now)
	if err != nil {
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: "now", Message: fmt.Sprintf("now %s: want the client's clock as an RFC 3339 instant", quote(req.Now))}, http.StatusBadRequest)
		return
	}
	if skew := time.Since(now); skew > wire.MaxClockSkew || skew < -wire.MaxClockSkew {
		s.fail(w, wire.Error{Code: wire.CodeClockSkew, Field: "now", Message: fmt.Sprintf("now: the client's clock says %s, %v from the server's; a client more than %v off would print other dates and periods: set its clock (NTP)", now.UTC().Format(time.RFC3339Nano), skew.Round(time.Millisecond), wire.MaxClockSkew)}, http.StatusConflict)
		return
	}
	if err := g.CheckKey(req.Key); err != nil {
		s.fail(w, wire.Error{Code: wire.CodeInvalid, Field: "key", Message: err.Error()}, http.StatusBadRequest)
		return
	}
	by := actor(grantIn(w))
	if req.Client != "" {
		by += ", for " + req.Client
	}
	rg, err := src.alloc.Allocate(sequence.WithBy(r.Context(), by), req.Key, req.N)
	if err != nil {
		s.error(w, err)
		return
	}
	if rg.Len() != req.N {
		s.error(w, fmt.Errorf("server: the store gave %v for a block of %d", rg, req.N))
		return
	}
	s.counts[name].hand(req.Key, rg)
	reply(w, http.StatusOK, wire.BlockResponse{Key: req.Key, First: rg.First, Last: rg.Last})
}
