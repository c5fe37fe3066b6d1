// Package catalog keeps a store's catalog of series: one [Entry] per
// template that drew numbers from the store, with what is needed to prove
// that a new template never prints a string an old one printed for
// another counter or number.
//
// sn enrolls a template in the catalog of each store it draws from before
// its first number. The catalog lives in the store's records (package
// record), written once here for every store: an enrollment reads every
// entry, proves the new template against them, and writes its entry only
// if no other enrollment wrote in between, so that of two processes
// enrolling templates that collide at one moment, on two machines, one
// wins and the other is refused.
//
// Entries are kept for good: the numbers they printed exist on paper.
// [Forget] removes one on an administrator's explicit request.
//
// # Layout
//
// "cat/e/" followed by an entry's ID holds the entry as JSON; "cat/v", the
// catalog's version, is rewritten by every enrollment and forget (with
// the ID, or "-" and the ID), so that an enrollment proven against the
// entries of an older version is proven again.
package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// Entry is one template in a store's catalog.
type Entry struct {
	// ID identifies what the template prints: equal templates, however
	// spelt, have equal IDs. At most 64 bytes.
	ID string
	// Name is what the template is called where it was first used (its
	// name in a config file), or "".
	Name string
	// Spec is what sn needs to prove against the template without its
	// code (JSON, opaque to the store). At most [MaxSpec] bytes.
	Spec string
	// First is when it was first enrolled, by the store's clock; By who
	// enrolled it (host, program, process).
	First time.Time
	By    string
}

// MaxSpec is the largest Entry.Spec a catalog takes, in bytes.
const MaxSpec = 64 << 10

// The records of the catalog.
const (
	entryPrefix = "cat/e/"
	versionKey  = "cat/v"
)

// Check returns an error wrapping [sequence.ErrInvalidArgument] when e
// cannot be enrolled: an empty or long ID, a long name or spec.
func Check(e Entry) error {
	if e.ID == "" || len(e.ID) > 64 || len(e.Name) > 255 || len(e.By) > 255 || len(e.Spec) > MaxSpec {
		return fmt.Errorf("catalog: entry %.64q: an ID of %d bytes (1 to 64), a name of %d and a By of %d (at most 255), a spec of %d (at most %d): %w",
			e.ID, len(e.ID), len(e.Name), len(e.By), len(e.Spec), MaxSpec, sequence.ErrInvalidArgument)
	}
	return nil
}

// Sort sorts entries oldest first, then by ID.
func Sort(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// Catalog is the catalog of one store.
type Catalog struct {
	s record.Store
	j journal.Keeper // where enrollments and forgets are noted, or nil
}

// New returns the catalog kept in s, whose enrollments and forgets are
// noted in j's journal of [journal.CatalogKey] when j is not nil.
func New(s record.Store, j journal.Keeper) *Catalog { return &Catalog{s: s, j: j} }

// Of returns the catalog of the store v keeps its records in (see
// [record.Of]): a store, or a Gen or Allocator over one, whose journal,
// if it keeps one, notes enrollments and forgets. It returns nil when v
// keeps no records.
func Of(v any) *Catalog {
	s := record.Of(v)
	if s == nil {
		return nil
	}
	return New(s, journal.Of(v))
}

// Records returns the records the catalog is kept in.
func (c *Catalog) Records() record.Store { return c.s }

// note notes an enrollment or a forget in the catalog's journal. It is
// best effort: the catalog is the record, its journal the history.
func (c *Catalog) note(ctx context.Context, kind journal.EventKind, id, name string) {
	if c.j == nil {
		return
	}
	reason := id
	if name != "" {
		reason += " " + name
	}
	_, _ = c.j.Note(context.WithoutCancel(ctx), journal.CatalogKey, journal.Event{Kind: kind, Reason: reason})
}

// Enroll records e in the catalog unless an entry with e.ID is
// recorded already, and returns the entry recorded: e with First set by
// the store's clock, or the earlier one with that ID. Before recording it calls check with every entry
// recorded; when check returns an error, Enroll records nothing and
// returns that error. No other Enroll on the store records an entry
// between the call to check and the recording: check may run more than
// once (after a concurrent enrollment), each time with every entry.
func (c *Catalog) Enroll(ctx context.Context, e Entry, check func([]Entry) error) (Entry, error) {
	if err := Check(e); err != nil {
		return Entry{}, err
	}
	var got Entry
	added := false
	err := record.Update(ctx, c.s, func(tx *record.Tx) error {
		added = false
		// The version and the entry in one read: an entry recorded
		// already (every start of a process that enrolled before) costs
		// that read alone, and no commit.
		rs, err := tx.Get(versionKey, entryPrefix+e.ID)
		if err != nil {
			return err
		}
		if rs[1].Exists() {
			got, err = decode(rs[1])
			return err
		}
		es, err := read(tx)
		if err != nil {
			return err
		}
		if err := check(es); err != nil {
			return err
		}
		now, err := tx.Now()
		if err != nil {
			return err
		}
		got = e
		got.First = now.UTC()
		v, err := json.Marshal(got)
		if err != nil {
			return err
		}
		tx.Put(entryPrefix+e.ID, v)
		tx.Put(versionKey, []byte(e.ID))
		added = true
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	if added {
		c.note(ctx, journal.Enrolled, got.ID, got.Name)
	}
	return got, nil
}

// Entries returns every entry of the catalog, oldest first.
func (c *Catalog) Entries(ctx context.Context) ([]Entry, error) {
	rs, err := c.s.Scan(ctx, entryPrefix, record.PrefixEnd(entryPrefix), 0)
	if err != nil {
		return nil, err
	}
	return decodeAll(rs)
}

// Forget removes the entry with id from the catalog, and reports whether
// there was one.
func (c *Catalog) Forget(ctx context.Context, id string) (bool, error) {
	if id == "" || len(id) > 64 {
		return false, nil
	}
	found := false
	err := record.Update(ctx, c.s, func(tx *record.Tx) error {
		r, err := tx.Get1(entryPrefix + id)
		if err != nil {
			return err
		}
		found = r.Exists()
		if found {
			tx.Delete(entryPrefix + id)
			tx.Put(versionKey, []byte("-"+id))
		}
		return nil
	})
	if err == nil && found {
		c.note(ctx, journal.Forgotten, id, "")
	}
	return found, err
}

// read reads every entry in tx.
func read(tx *record.Tx) ([]Entry, error) {
	rs, err := tx.Scan(entryPrefix, record.PrefixEnd(entryPrefix), 0)
	if err != nil {
		return nil, err
	}
	return decodeAll(rs)
}

// decodeAll decodes entries, oldest first.
func decodeAll(rs []record.Record) ([]Entry, error) {
	es := make([]Entry, 0, len(rs))
	for _, r := range rs {
		e, err := decode(r)
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	Sort(es)
	return es, nil
}

// ErrCorrupt is wrapped by the error of a catalog record the package did
// not write.
var ErrCorrupt = errors.New("catalog: corrupt entry")

func decode(r record.Record) (Entry, error) {
	var e Entry
	id := strings.TrimPrefix(r.Key, entryPrefix)
	if err := json.Unmarshal(r.Value, &e); err != nil || e.ID != id {
		return Entry{}, fmt.Errorf("%w: %q holds %.80q", ErrCorrupt, r.Key, r.Value)
	}
	return e, nil
}

// Import writes entries into the catalog where it has none of their IDs,
// keeping their First: what a store's migration calls with the entries
// of the layout an earlier release wrote.
func (c *Catalog) Import(ctx context.Context, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = entryPrefix + e.ID
	}
	return record.Update(ctx, c.s, func(tx *record.Tx) error {
		rs, err := tx.Get(keys...)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, r := range rs {
			have[r.Key] = r.Exists()
		}
		ops, err := ImportOps(es, func(k string) bool { return have[k] })
		for _, o := range ops {
			tx.Put(o.Key, o.Value)
		}
		return err
	})
}

// ImportOps returns the writes that import entries into a catalog, for a
// store that migrates inside a transaction of its own: a put of each
// entry whose record does not exist (exists reports whether a record
// does), and of the catalog's version.
func ImportOps(es []Entry, exists func(key string) bool) ([]record.Op, error) {
	var ops []record.Op
	for _, e := range es {
		if err := Check(e); err != nil {
			return nil, err
		}
		if exists(entryPrefix + e.ID) {
			continue
		}
		v, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		ops = append(ops, record.Put(entryPrefix+e.ID, v))
	}
	if len(ops) > 0 {
		ops = append(ops, record.Put(versionKey, []byte("import")))
	}
	return ops, nil
}
