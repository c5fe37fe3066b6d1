package sequence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Catalog is implemented by a [Gen] or [Allocator] whose store keeps the
// series printed from it: one [Entry] per template, with what is needed to
// prove that a new template never prints a string an old one printed for
// another counter or number. sn enrolls a template in the catalog of each
// store it draws from before its first number; the store serialises
// enrollments, so that of two processes enrolling templates that collide
// at one moment, on two machines, one wins and the other is refused.
//
// Entries are kept for good: the numbers they printed exist on paper.
// Forget removes one on an administrator's explicit request.
//
// A wrapper whose store keeps no catalog returns an error wrapping
// errors.ErrUnsupported.
type Catalog interface {
	// Enroll records e unless an entry with e.ID is recorded already, and
	// returns the entry recorded: e with First set by the store's clock, or
	// the earlier one with that ID. Before recording it calls check with
	// every entry recorded; when check returns an error, Enroll records
	// nothing and returns that error. No other Enroll on the store records
	// an entry between the call to check and the recording: check may run
	// more than once (after a concurrent enrollment), each time with every
	// entry.
	Enroll(ctx context.Context, e Entry, check func([]Entry) error) (Entry, error)
	// Entries returns every entry, oldest first.
	Entries(ctx context.Context) ([]Entry, error)
	// Forget removes the entry with id, and reports whether there was one.
	Forget(ctx context.Context, id string) (bool, error)
}

// Entry is one template in a store's [Catalog].
type Entry struct {
	// ID identifies what the template prints: equal templates, however
	// spelt, have equal IDs. At most 64 bytes.
	ID string
	// Name is what the template is called where it was first used (its
	// name in a config file), or "".
	Name string
	// Spec is what sn needs to prove against the template without its
	// code (JSON, opaque to the store). At most 64 KiB.
	Spec string
	// First is when it was first enrolled, by the store's clock; By who
	// enrolled it (host, program, process).
	First time.Time
	By    string
}

// Numbering is implemented by a [Gen] whose numbers are not its store's
// counters one to one: a snowflake Gen's time-ordered ids, a [Balanced]'s
// interleaving of its Gens' values. Numbering describes how it numbers
// ("snowflake 41/10/12 from 2014-09-01", "balanced 4"). A template's entry
// in a catalog records it: templates whose sequences number alike may
// share counters; others must print disjoint numbers, as templates on two
// stores must.
type Numbering interface {
	Numbering() string
}

// Numbering returns "balanced N", N its Gens: a number is a Gen's value
// shifted left, with the Gen's index in the low bits.
func (b *Balanced) Numbering() string { return fmt.Sprintf("balanced %d", len(b.gens)) }

// MaxSpec is the largest Entry.Spec a Catalog takes, in bytes.
const MaxSpec = 64 << 10

// CheckEntry returns an error wrapping [ErrInvalidArgument] when e cannot
// be enrolled: an empty or long ID, a long name or spec.
func CheckEntry(e Entry) error {
	if e.ID == "" || len(e.ID) > 64 || len(e.Name) > 255 || len(e.By) > 255 || len(e.Spec) > MaxSpec {
		return fmt.Errorf("sequence: catalog entry %.64q: an ID of %d bytes (1 to 64), a name of %d and a By of %d (at most 255), a spec of %d (at most %d): %w",
			e.ID, len(e.ID), len(e.Name), len(e.By), len(e.Spec), MaxSpec, ErrInvalidArgument)
	}
	return nil
}

// SortEntries sorts entries oldest first, then by ID.
func SortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// catalog is a store's catalog in memory.
type catalog struct {
	mu      sync.Mutex
	m       map[string]Entry
	journal Journal // where enrollments and forgets are noted, or nil
}

func (c *catalog) enroll(ctx context.Context, e Entry, now time.Time, check func([]Entry) error) (Entry, error) {
	e, added, err := c.add(ctx, e, now, check)
	if err == nil && added && c.journal != nil {
		NoteCatalog(ctx, c.journal, Enrolled, e)
	}
	return e, err
}

func (c *catalog) add(ctx context.Context, e Entry, now time.Time, check func([]Entry) error) (Entry, bool, error) {
	if err := CheckEntry(e); err != nil {
		return Entry{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.m[e.ID]; ok {
		return got, false, nil
	}
	if err := check(c.list()); err != nil {
		return Entry{}, false, err
	}
	if c.m == nil {
		c.m = map[string]Entry{}
	}
	e.First = now
	c.m[e.ID] = e
	return e, true, nil
}

func (c *catalog) list() []Entry {
	out := make([]Entry, 0, len(c.m))
	for _, e := range c.m {
		out = append(out, e)
	}
	SortEntries(out)
	return out
}

func (c *catalog) entries(ctx context.Context) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list(), nil
}

func (c *catalog) forget(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	c.mu.Lock()
	_, ok := c.m[id]
	delete(c.m, id)
	c.mu.Unlock()
	if ok && c.journal != nil {
		NoteCatalog(ctx, c.journal, Forgotten, Entry{ID: id})
	}
	return ok, nil
}

// errNoCatalog is the error of a wrapper whose store keeps no catalog.
func errNoCatalog(who string, store any) error {
	return fmt.Errorf("sequence: %s: %T keeps no catalog: %w", who, store, errors.ErrUnsupported)
}
