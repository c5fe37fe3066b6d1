package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/wire"
)

// Blocks is a [sequence.Allocator] of one template's counters on the
// server: each Allocate takes a block with POST .../blocks. A block's
// numbers are the client's alone to print, with the template's canonical
// text and an engine that renders as the server's (package remote does
// both). A block taken by a process that dies unused is a gap in the
// counter's journal, never a repeat: no one else is given its numbers.
//
// Blocks is also a [journal.Keeper] that notes only: a Segment over it
// notes what became of its blocks through the server (POST .../notes),
// so that the numbers a process leaves unused when it closes show in
// the journal as released, not open. Events and Head are not served.
type Blocks struct {
	g        *Generator
	template string
	engine   string
	now      func() time.Time

	mu       sync.Mutex
	receipts map[string]string // by key: the server's receipt of the blocks, for notes
}

// Blocks returns an Allocator of the template's counters for a client
// that prints them from template, the template's canonical text, with an
// engine whose sn.Engine() is engine: the server refuses a block to a
// client that names another text or engine (a template changed since the
// client read it, another version of sn), or whose clock is more than
// wire.MaxClockSkew from its own.
func (t *Generator) Blocks(template, engine string) *Blocks {
	return &Blocks{g: t, template: template, engine: engine, now: time.Now}
}

// Allocate takes a block of n numbers of key: sequence.Allocator. After a
// failed connection, a timeout or a 503 it asks again, as the issuing
// calls do; a block the server gave to a request whose answer was lost is
// a gap.
func (b *Blocks) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	var out wire.BlockResponse
	req := wire.BlockRequest{Key: key, N: n, Template: b.template, Engine: b.engine, Client: journal.ProcessName()}
	err := b.g.c.retryWith(ctx, b.g.path+"/blocks", "", func() any {
		req.Now = b.now().UTC().Format(time.RFC3339Nano) // each try reads the clock again
		return req
	}, &out)
	if err != nil {
		return sequence.Range{}, err
	}
	if out.Key != key || out.Last-out.First+1 != n || out.First < 1 {
		return sequence.Range{}, fmt.Errorf("client: a block of %d of %q: the server answered [%d, %d] of %q", n, key, out.First, out.Last, out.Key)
	}
	b.mu.Lock()
	if b.receipts == nil {
		b.receipts = map[string]string{}
	}
	b.receipts[key] = out.Receipt
	b.mu.Unlock()
	return sequence.Range{First: out.First, Last: out.Last}, nil
}

// Note adds e, a record of the client's own blocks — [journal.Released],
// [journal.Lost] or [journal.Closed] — to key's journal on the server:
// journal.Keeper. It sends the receipt the server gave with the key's
// blocks, so that only this Blocks notes in its process's name; the
// server takes a release only of numbers of blocks it handed to it
// lately. The record comes back with Seq and By set.
func (b *Blocks) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	b.mu.Lock()
	receipt := b.receipts[key]
	b.mu.Unlock()
	var out wire.BlockNoteResponse
	req := wire.BlockNote{Key: key, Kind: e.Kind.String(), First: e.Range.First, Last: e.Range.Last, Reason: e.Reason, Client: journal.ProcessName(), Receipt: receipt}
	if err := b.g.c.retryWith(ctx, b.g.path+"/notes", "", func() any { return req }, &out); err != nil {
		return journal.Event{}, err
	}
	e.Seq, e.By = out.Seq, out.By
	return e, nil
}

// Events is not served: journal.Keeper. Read a counter's journal
// where its store is (sn gaps).
func (b *Blocks) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	return nil, fmt.Errorf("client: the journal of %q is read where its store is (sn gaps), not through sn serve: %w", key, errors.ErrUnsupported)
}

// Head is not served: journal.Keeper.
func (b *Blocks) Head(ctx context.Context, key string) (journal.Head, error) {
	return journal.Head{}, fmt.Errorf("client: the journal of %q is read where its store is (sn gaps), not through sn serve: %w", key, errors.ErrUnsupported)
}

// Prune is not served: journal.Keeper. A journal is pruned where its
// store is (sn prune).
func (b *Blocks) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	return journal.Event{}, fmt.Errorf("client: the journal of %q is pruned where its store is (sn prune), not through sn serve: %w", key, errors.ErrUnsupported)
}

var _ journal.Keeper = (*Blocks)(nil)
