package journal

import (
	"context"

	"github.com/sngen/sn/sequence/record"
)

// Holder is implemented by a store whose journals are kept in its records
// (its Journal method returns [InRecords]), and by a wrapper of a store
// that keeps journals (a Segment, a cache in front of a ledger), whose
// Journal returns the journals of what it wraps, with the wrapper's own
// checks, or nil when that keeps none. It is the one method a wrapper
// forwards for the journals, in place of a Keeper's four.
type Holder interface {
	Journal() Keeper
}

// Of returns the journals of v: v itself if it is a [Keeper], what its
// Journal method returns if it is a [Holder], and nil otherwise.
func Of(v any) Keeper {
	switch x := v.(type) {
	case Keeper:
		return x
	case Holder:
		return x.Journal()
	}
	return nil
}

// InRecords returns the journals kept in s: the [Keeper] of a store that
// appends to a key's journal in the transaction that moves its counter
// (through [record.In]), and notes, reads and prunes through its records
// alone. A store's Journal method returns it.
func InRecords(s record.Store) Keeper { return inRecords{s} }

type inRecords struct{ s record.Store }

func (j inRecords) Note(ctx context.Context, key string, e Event) (Event, error) {
	var out Event
	err := record.Update(ctx, j.s, func(tx *record.Tx) (err error) {
		out, err = Note(tx, key, e)
		return err
	})
	return out, Overwrite(key, err)
}

func (j inRecords) Events(ctx context.Context, key string, after int64, limit int) ([]Event, error) {
	return Events(ctx, j.s, key, after, limit)
}

func (j inRecords) Head(ctx context.Context, key string) (Head, error) {
	return ReadHead(ctx, j.s, key)
}

func (j inRecords) Prune(ctx context.Context, key string, p Event) (Event, error) {
	return Prune(ctx, j.s, key, p)
}
