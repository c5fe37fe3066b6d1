// Package remote prints a sn serve template's numbers in this process,
// from blocks of its counters that sn serve hands out: a Go service
// issues at the library's speed, from memory, and asks the service once
// per block instead of once per number.
//
//	c, _ := client.New("https://sn.internal:8080", client.Options{Token: token})
//	orders, err := remote.New(ctx, c, "orders", remote.Options{})
//	if err != nil { ... }
//	defer orders.Close()
//	n, err := orders.Next(ctx) // an *sn.Generator's methods
//
// The numbers are those sn serve would print: the Generator compiles the
// template's canonical text it fetched, and refuses to start unless this
// build of sn renders as the service's (sn.Engine) and reads the template
// back as the service does; the service refuses a block to a client whose
// template text, engine or clock differs from its own. A block is the
// client's alone, journaled in the service's store with the token and the
// process that took it: what a process that dies held unused is a gap in
// the journal, never a repeat.
//
// Templates whose numbers only the service can print hand out no
// blocks, and New says why: one with obfuscate= (its key stays with the
// service), counters that expire by the store's clock (reset=hour and
// shorter), numbers balanced over several stores, snowflake ids.
package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sngen/sn"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/sequence"
)

// Options configure [New].
type Options struct {
	// Segment sizes the blocks (Step, MinStep, MaxStep, Prefetch...);
	// the zero value takes sequence's defaults. MaxStep is lowered to the
	// largest block the service hands out.
	Segment sequence.SegmentOptions
	// SN are options for the template, such as the sn.WithRegistry of
	// the expressions the service registers: the template must compile
	// here as it does there.
	SN []sn.Option
}

// ErrMismatch is returned by New when this process would print the
// template otherwise than the service: another engine (sn.Engine), or a
// template that reads back otherwise.
var ErrMismatch = errors.New("remote: this process would print the template otherwise than the service")

// ErrForbidden is returned by New when the client's token may not issue
// from the template.
var ErrForbidden = errors.New("remote: the token may not issue from the template")

// Generator is an *sn.Generator over blocks of the service's counters.
// Close it when done: the Segment under it stops.
type Generator struct {
	*sn.Generator
	seg *sequence.Segment
}

// New fetches template name from the service c talks to and returns a
// Generator that prints its numbers here.
func New(ctx context.Context, c *client.Client, name string, opts Options) (*Generator, error) {
	info, err := c.Generator(name).Explain(ctx)
	if err != nil {
		return nil, fmt.Errorf("remote: template %q: %w", name, err)
	}
	switch {
	case !slices.Contains(info.Actions, "issue"):
		return nil, fmt.Errorf("%w: template %q: the token's scope is %s", ErrForbidden, name, strings.Join(info.Actions, ", "))
	case info.MaxBlock < 1:
		return nil, fmt.Errorf("remote: template %q hands out no blocks: %s: %w", name, info.NoBlocks, errors.ErrUnsupported)
	case info.Engine != sn.Engine():
		return nil, fmt.Errorf("%w: template %q: the service's sn renders as %s, this one as %s: build with the service's version of sn", ErrMismatch, name, info.Engine, sn.Engine())
	}
	so := opts.Segment
	if so.MaxStep == 0 || so.MaxStep > info.MaxBlock {
		so.MaxStep = info.MaxBlock
	}
	so.Step = min(so.Step, so.MaxStep)
	so.MinStep = min(so.MinStep, so.MaxStep)
	seg, err := sequence.NewSegment(c.Generator(name).Blocks(info.Template, sn.Engine()), so)
	if err != nil {
		return nil, fmt.Errorf("remote: template %q: %w", name, err)
	}
	g, err := sn.New(info.Template, append(append([]sn.Option{sn.WithName(name)}, opts.SN...), sn.WithSequence("seq", seg))...)
	if err == nil && g.String() != info.Template {
		err = fmt.Errorf("%w: template %q: the service's text %q reads here as %q", ErrMismatch, name, info.Template, g.String())
	}
	if err != nil {
		seg.Close()
		return nil, fmt.Errorf("remote: template %q: %w", name, err)
	}
	return &Generator{Generator: g, seg: seg}, nil
}

// Close stops the Generator: what it holds unused of its blocks is a gap.
// It must not be used afterwards.
func (g *Generator) Close() error { return g.seg.Close() }

// Stats returns the counters of the Segment under the Generator: blocks
// fetched, waits at block edges.
func (g *Generator) Stats() sequence.SegmentStats { return g.seg.Stats() }
