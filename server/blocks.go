package server

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
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
	var req wire.BlockRequest
	name, g, src, ok := s.blockRequest(w, r, &req)
	if !ok {
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
	case !s.journalText(w, "client", req.Client, " naming the client process"):
		return
	}
	now, err := time.Parse(time.RFC3339Nano, req.Now)
	if err != nil {
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: "now", Message: fmt.Sprintf("now %s: want the client's clock as an RFC 3339 instant", quote(req.Now))}, http.StatusBadRequest)
		return
	}
	if ahead := time.Until(now); ahead > wire.MaxClockSkew || ahead < -wire.MaxClockSkew {
		// ahead is the client's clock less the server's.
		off := fmt.Sprintf("%v ahead of", ahead.Round(100*time.Millisecond))
		if ahead < 0 {
			off = fmt.Sprintf("%v behind", (-ahead).Round(100*time.Millisecond))
		}
		s.fail(w, wire.Error{Code: wire.CodeClockSkew, Field: "now", Message: fmt.Sprintf("now: the client's clock says %s, %s the server's; a client more than %v off would print other dates and periods: set its clock (NTP)", now.UTC().Format(time.RFC3339Nano), off, wire.MaxClockSkew)}, http.StatusConflict)
		return
	}
	if err := g.CheckKey(req.Key); err != nil {
		s.fail(w, wire.Error{Code: wire.CodeInvalid, Field: "key", Message: err.Error()}, http.StatusBadRequest)
		return
	}
	by := blockActor(w, req.Client)
	rg, err := src.alloc.Allocate(journal.WithBy(r.Context(), by), req.Key, req.N)
	if err != nil {
		s.error(w, err)
		return
	}
	if rg.Len() != req.N {
		s.error(w, fmt.Errorf("server: the store gave %v for a block of %d", rg, req.N))
		return
	}
	s.counts[name].hand(req.Key, rg)
	receipt := s.handed.add(actor(grantIn(w)), handedKey{name, req.Key, by}, rg)
	reply(w, http.StatusOK, wire.BlockResponse{Key: req.Key, First: rg.First, Last: rg.Last, Receipt: receipt})
}

// blockRequest reads the body of a block route into req, for a token
// that may issue from the template, and returns the template's name,
// Generator and blocks; or answers the error.
func (s *Server) blockRequest(w http.ResponseWriter, r *http.Request, req any) (string, *sn.Generator, blockSource, bool) {
	name, g, ok := s.generator(w, r, Issue)
	if !ok {
		return "", nil, blockSource{}, false
	}
	if _, code := s.decode(w, r, req); code != "" {
		return "", nil, blockSource{}, false
	}
	src := s.sources[name]
	if src.alloc == nil {
		s.error(w, fmt.Errorf("template %s hands out no blocks: %s: %w", quote(name), src.why, errors.ErrUnsupported))
		return "", nil, blockSource{}, false
	}
	return name, g, src, true
}

// blockActor is who takes a block, and notes what became of it, in the
// journal: the token, and the client process it names.
func blockActor(w http.ResponseWriter, client string) string {
	by := actor(grantIn(w))
	if client != "" {
		by += ", for " + client
	}
	return by
}

// journalText reports whether text, the field of a block route that the
// journal keeps (the client process's name, a note's reason), is at most
// 200 bytes of printable UTF-8, or answers 400 saying what it is for.
func (s *Server) journalText(w http.ResponseWriter, field, text, what string) bool {
	if len(text) > 200 || !utf8.ValidString(text) || !printable(text) {
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: field, Message: fmt.Sprintf("%s: want at most 200 bytes of printable UTF-8%s (no control characters: the journal keeps it)", field, what)}, http.StatusBadRequest)
		return false
	}
	return true
}

// notes adds a client's record of its own blocks to a counter's journal:
// POST /v1/templates/{name}/notes. The note must come with the receipt
// this server gave the same token and client process with its blocks of
// the key: the client's name is its own word, and another process of
// the same token must not note in its name (a lost or closed record
// changes what the audit says of that client's numbers). A release must
// also lie in blocks handed to it: a release marks numbers unused
// whoever reserved them.
func (s *Server) notes(w http.ResponseWriter, r *http.Request) {
	var req wire.BlockNote
	name, g, src, ok := s.blockRequest(w, r, &req)
	if !ok {
		return
	}
	j := journal.Of(src.alloc)
	switch {
	case j == nil:
		s.error(w, fmt.Errorf("template %s: its store keeps no journal: %w", quote(name), errors.ErrUnsupported))
		return
	case !s.journalText(w, "client", req.Client, " naming the client process"), !s.journalText(w, "reason", req.Reason, ""):
		return
	}
	kind, err := journal.ParseEventKind(req.Kind)
	if err != nil || (kind != journal.Released && kind != journal.Lost && kind != journal.Closed) {
		s.fail(w, wire.Error{Code: wire.CodeBadRequest, Field: "kind", Message: fmt.Sprintf("kind %s: want released, lost or closed (a void is POST /v1/templates/%s/void)", quote(req.Kind), name)}, http.StatusBadRequest)
		return
	}
	if err := g.CheckKey(req.Key); err != nil {
		s.fail(w, wire.Error{Code: wire.CodeInvalid, Field: "key", Message: err.Error()}, http.StatusBadRequest)
		return
	}
	by := blockActor(w, req.Client)
	hk, rg := handedKey{name, req.Key, by}, sequence.Range{First: req.First, Last: req.Last}
	owner := actor(grantIn(w))
	known, covered := s.handed.check(owner, hk, req.Receipt, rg)
	switch {
	case !known:
		s.fail(w, wire.Error{Code: wire.CodeInvalid, Field: "receipt", Message: fmt.Sprintf("receipt: not the one this server gave %s with its blocks of key %s since it started: a client notes only its own blocks, with their receipt", quote(by), quote(req.Key))}, http.StatusBadRequest)
		return
	case kind == journal.Released && !covered:
		s.fail(w, wire.Error{Code: wire.CodeInvalid, Field: "first", Message: fmt.Sprintf("released %v: not within the blocks this server handed to %s lately", rg, quote(by))}, http.StatusBadRequest)
		return
	}
	e, err := j.Note(journal.WithBy(r.Context(), by), req.Key, journal.Event{Kind: kind, Range: rg, Reason: req.Reason})
	if err != nil {
		s.error(w, err)
		return
	}
	if kind == journal.Closed {
		s.handed.forget(owner, hk, rg.Last)
	}
	reply(w, http.StatusOK, wire.BlockNoteResponse{Seq: e.Seq, By: e.By})
}

// handedKey is a counter key of a template, and who took blocks of it.
type handedKey struct{ template, key, by string }

// handed is what the server remembers of one client's blocks of a key:
// the last few, and their receipt.
type handed struct {
	blocks  []sequence.Range // oldest first
	receipt string
}

// handedBlocks are the blocks handed lately to each client process: the
// last few per key, for the most recent clients of each token. A Segment
// holds two blocks of a key at most, and notes only those. Each token
// has a table of its own, so that no token's clients push another's out.
type handedBlocks struct {
	mu     sync.Mutex
	tables map[string]*handedTable // by the token's actor
}

// handedTable is one token's.
type handedTable struct {
	m     map[handedKey]*handed
	order []handedKey // oldest first, to forget the oldest client first
}

const (
	handedPerKey   = 4
	handedPerToken = 1 << 12
)

// entry returns k's entry in owner's table, or nil.
func (h *handedBlocks) entry(owner string, k handedKey) *handed {
	if t := h.tables[owner]; t != nil {
		return t.m[k]
	}
	return nil
}

// add records r, handed to k of token owner, and returns k's receipt.
func (h *handedBlocks) add(owner string, k handedKey, r sequence.Range) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tables == nil {
		h.tables = map[string]*handedTable{}
	}
	t := h.tables[owner]
	if t == nil {
		t = &handedTable{m: map[handedKey]*handed{}}
		h.tables[owner] = t
	}
	e := t.m[k]
	if e == nil {
		if len(t.order) >= handedPerToken {
			delete(t.m, t.order[0])
			t.order = t.order[1:]
		}
		t.order = append(t.order, k)
		e = &handed{receipt: rand.Text()}
		t.m[k] = e
	}
	if len(e.blocks) >= handedPerKey {
		e.blocks = e.blocks[1:]
	}
	e.blocks = append(e.blocks, r)
	return e.receipt
}

// check reports whether receipt is k's, and whether r lies within the
// blocks handed to k: in one, or across adjacent ones (a Segment releases
// the rest of its block and the whole next one as one range).
func (h *handedBlocks) check(owner string, k handedKey, receipt string, r sequence.Range) (known, covered bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entry(owner, k)
	if e == nil || subtle.ConstantTimeCompare([]byte(e.receipt), []byte(receipt)) != 1 {
		return false, false
	}
	if r.First < 1 || r.First > r.Last {
		return true, false
	}
	bs := slices.Clone(e.blocks)
	slices.SortFunc(bs, func(a, b sequence.Range) int { return cmp.Compare(a.First, b.First) })
	next := r.First // the first number of r not yet found in a block
	for _, b := range bs {
		if b.First <= next && b.Last >= next {
			next = b.Last + 1
			if next > r.Last {
				return true, true
			}
		}
	}
	return true, false
}

// forget drops the blocks of k up to last: k noted that it holds none of
// them any more. Its receipt stays, for notes sent again.
func (h *handedBlocks) forget(owner string, k handedKey, last int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entry(owner, k)
	if e == nil {
		return
	}
	bs := e.blocks[:0]
	for _, b := range e.blocks {
		if b.Last > last {
			bs = append(bs, b)
		}
	}
	e.blocks = bs
}
