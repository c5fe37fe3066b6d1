package journal

import (
	"context"

	"github.com/sngen/sn/sequence/record"
)

// Events returns up to limit records of key's journal in s whose Seq is
// greater than after, in order of Seq.
func Events(ctx context.Context, s record.Store, key string, after int64, limit int) ([]Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	rs, err := s.Scan(ctx, Key(key, max(after+1, 0)), record.PrefixEnd(Prefix(key)), limit)
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(rs))
	for i, r := range rs {
		if out[i], err = decode(key, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Head returns where key's journal in s ends.
func ReadHead(ctx context.Context, s record.Store, key string) (Head, error) {
	rs, err := s.Get(ctx, HeadKey(key))
	if err != nil {
		return Head{}, err
	}
	return DecodeHead(key, rs[0].Value)
}

// Prune replaces the records of key's journal in s through record p.Seq
// with p, the signed Pruned record that sums them up (see
// [Keeper]), if the head and that record are still those
// [CheckPrune] checks p against when it commits.
func Prune(ctx context.Context, s record.Store, key string, p Event) (Event, error) {
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		head, err := HeadOf(tx, key)
		if err != nil {
			return err
		}
		var at Event
		if p.Seq >= 1 {
			r, err := tx.Get1(Key(key, p.Seq))
			if err != nil {
				return err
			}
			if r.Exists() {
				if at, err = decode(key, r); err != nil {
					return err
				}
			}
		}
		if err := CheckPrune(key, p, at, head); err != nil {
			return err
		}
		tx.DeleteRange(Prefix(key), Key(key, p.Seq))
		tx.Put(Key(key, p.Seq), MarshalEvent(p))
		return nil
	})
	if err != nil {
		return Event{}, err
	}
	return p, nil
}
