package sn

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// Option configures a Generator in [New].
type Option func(*options)

type options struct {
	registry   *Registry
	seqs       map[string]sequence.Gen
	clock      func() time.Time
	retention  time.Duration
	keys       map[string][]byte // obfuscate= keys by name
	middleware []Middleware
	name       string
	profiles   []string
	checkOnly  bool
	errs       []error
}

func newOptions(opts []Option) (*options, error) {
	o := &options{registry: defaultRegistry, seqs: map[string]sequence.Gen{}, clock: time.Now}
	for _, opt := range opts {
		if opt == nil {
			o.errs = append(o.errs, errors.New("sn: nil Option"))
			continue
		}
		opt(o)
	}
	return o, errors.Join(o.errs...)
}

// resolve gives the sequences and expressions of the template: a name
// is never both.
func (o *options) resolve() (map[string]sequence.Gen, map[string]expression.Factory, error) {
	exprs := o.registry.snapshot()
	for name := range o.seqs {
		if _, ok := exprs[name]; ok {
			return nil, nil, fmt.Errorf("%w: WithSequence(%q): the registry has an expression of that name", ErrTemplate, name)
		}
	}
	return o.seqs, exprs, nil
}

// WithSequence makes g available to the template as name: "@<name>"
// draws from it. Every sequence a template names is given this way, so
// that no number comes from a counter nobody chose: sequence.NewMemory()
// in tests, a durable store for real numbers.
func WithSequence(name string, g sequence.Gen) Option {
	return func(o *options) {
		switch {
		case g == nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithSequence(%q): nil sequence", name))
		case o.seqs[name] != nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithSequence(%q) given twice", name))
		default:
			o.seqs[name] = g
		}
	}
}

// WithClock makes the Generator read the time from now instead of
// time.Now. It is read at most once per call.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now == nil {
			o.errs = append(o.errs, errors.New("sn: WithClock(nil)"))
			return
		}
		o.clock = now
	}
}

// WithRetention sets how long the counter of a period of an hour or
// shorter (reset=hour, minute, second) stays in the store after its
// period ends: two hours unless set, and at least one, so that the hour a
// zone repeats in the autumn finds its counter. Such counters expire, by
// the store's clock, in stores that can expire keys and tell their time
// (sequence.Expirer, and the clock of their records: every store of
// package sequence and its subpackages). A call at an instant more than
// half the retention before the store's time is refused, since its
// counter may be gone and starting it again would repeat numbers: with an
// error wrapping sequence.ErrClockRollback when the instant is the
// clock's, and [ErrInstant] when the caller gave it.
//
// A process reads the store's time again every quarter of the retention.
// A store whose clock steps forward by more than the retention and two
// periods (a server that booted hours fast, a failover to one) deletes the
// counters of the current period at once, by that clock. A store that
// keeps a journal of its counters (boltseq, sqliteseq, sqlseq, etcdseq,
// and redisseq over a ledger) then refuses to draw from them again, with
// an error wrapping journal.ErrBehind, until the period turns; one that
// keeps none (sequence.Memory, Redis alone) starts them again at 1. Let NTP
// slew the store's clock rather than step it, or raise the retention
// above the largest step you expect.
func WithRetention(d time.Duration) Option {
	return func(o *options) {
		if d < engine.MinRetention {
			o.errs = append(o.errs, fmt.Errorf("sn: WithRetention(%v): want at least %v", d, engine.MinRetention))
			return
		}
		o.retention = d
	}
}

// WithObfuscation gives the key of obfuscate=name: a sequence part
// written @<seq, width=8, obfuscate=name> prints, instead of its number n,
// the image of n under a keyed permutation of the numbers of width digits
// (a Feistel network with AES rounds). Numbers stay unique and of the same
// width, and consecutive numbers no longer show how many were issued;
// Parse and Validate invert it. The key must be at least 16 bytes; keep it
// out of the template, as a secret. It is obfuscation, not encryption:
// it hides volume and order from a casual observer, and a number remains
// guessable by whoever holds the key. A different key, or a different
// width, is a different permutation, and its numbers may meet the old
// ones: change neither while a series is in use.
func WithObfuscation(name string, key []byte) Option {
	return func(o *options) {
		switch {
		case name == "":
			o.errs = append(o.errs, errors.New("sn: WithObfuscation with an empty name"))
		case len(key) < 16:
			o.errs = append(o.errs, fmt.Errorf("sn: WithObfuscation(%q): a key of %d bytes, want at least 16", name, len(key)))
		case o.keys[name] != nil:
			o.errs = append(o.errs, fmt.Errorf("sn: WithObfuscation(%q) given twice", name))
		default:
			if o.keys == nil {
				o.keys = map[string][]byte{}
			}
			o.keys[name] = bytes.Clone(key)
		}
	}
}

// WithRegistry makes the Generator resolve names in r instead of the
// default registry.
func WithRegistry(r *Registry) Option {
	return func(o *options) {
		if r == nil {
			o.errs = append(o.errs, errors.New("sn: WithRegistry(nil)"))
			return
		}
		o.registry = r
	}
}

// WithName names the template in the catalogs of its stores (see
// [Generator.Enroll]) and in their refusals: its name in a config file,
// say. Names are for people; a template is known by what it prints.
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// CheckOnly makes a Generator that checks, parses and explains numbers
// ([Generator.Validate], [Generator.Parse], [Explain]) and never issues
// them, for a service that receives numbers another one issued: a
// sequence part that no [WithSequence] and no registry gives (@<seq>, or
// a part with width=, key=, reset= or another argument only a sequence
// takes) is then not an error at New. The template is proven as any
// other; its Next, Issue and Append return an error wrapping
// errors.ErrUnsupported.
func CheckOnly() Option {
	return func(o *options) { o.checkOnly = true }
}
