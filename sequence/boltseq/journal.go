package boltseq

import (
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
)

// The journals: one bucket per key (named like the key's entry in
// "sn.seq") in "sn.journal", its records under their Seq as 8 big-endian
// bytes; and the head of each, beside it in "sn.jhead".
var (
	journalBucket = []byte("sn.journal")
	headBucket    = []byte("sn.jhead") // k<key> -> seq (8) hash (32) mark (8)
)

// appendEvent chains e after the last record of the key encoded as k,
// with mark the key's mark after it, in tx.
func appendEvent(ctx context.Context, tx *bolt.Tx, k []byte, key string, e sequence.Event, before, mark int64) (sequence.Event, error) {
	head, err := headOf(tx, k)
	if err != nil {
		return sequence.Event{}, err
	}
	for _, r := range sequence.Reconcile(head, before) {
		if _, head, err = appendOne(ctx, tx, k, key, head, r, before); err != nil {
			return sequence.Event{}, err
		}
	}
	e, _, err = appendOne(ctx, tx, k, key, head, e, mark)
	return e, err
}

// appendOne chains e after head and writes it and the new head.
func appendOne(ctx context.Context, tx *bolt.Tx, k []byte, key string, head sequence.Head, e sequence.Event, mark int64) (sequence.Event, sequence.Head, error) {
	e.By = sequence.ByOf(ctx)
	e, head = sequence.Chain(head, key, e)
	head.Mark = mark
	jb, err := tx.CreateBucketIfNotExists(journalBucket)
	if err != nil {
		return sequence.Event{}, sequence.Head{}, err
	}
	b, err := jb.CreateBucketIfNotExists(k)
	if err != nil {
		return sequence.Event{}, sequence.Head{}, err
	}
	if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(e.Seq)), sequence.MarshalEvent(e)); err != nil {
		return sequence.Event{}, sequence.Head{}, err
	}
	hb, err := tx.CreateBucketIfNotExists(headBucket)
	if err != nil {
		return sequence.Event{}, sequence.Head{}, err
	}
	hv := binary.BigEndian.AppendUint64(nil, uint64(head.Seq))
	hv = append(hv, head.Hash[:]...)
	hv = binary.BigEndian.AppendUint64(hv, uint64(head.Mark))
	return e, head, hb.Put(k, hv)
}

// headOf returns the head of the journal of the key encoded as k.
func headOf(tx *bolt.Tx, k []byte) (sequence.Head, error) {
	hb := tx.Bucket(headBucket)
	if hb == nil {
		return sequence.Head{}, nil
	}
	v := hb.Get(k)
	if v == nil {
		return sequence.Head{}, nil
	}
	if len(v) != 48 {
		return sequence.Head{}, fmt.Errorf("%w: the journal head of %q has %d bytes, want 48", ErrCorrupt, k[1:], len(v))
	}
	var h sequence.Head
	h.Seq = int64(binary.BigEndian.Uint64(v))
	copy(h.Hash[:], v[8:40])
	h.Mark = int64(binary.BigEndian.Uint64(v[40:]))
	return h, nil
}

// Note appends e to key's journal, in one durable transaction: a
// [sequence.Journal].
func (s *Store) Note(ctx context.Context, key string, e sequence.Event) (sequence.Event, error) {
	var out sequence.Event
	err := s.update(ctx, "note", key, func(b *bolt.Bucket, k []byte) error {
		head, err := headOf(b.Tx(), k)
		if err != nil {
			return err
		}
		if err := sequence.CheckNote(key, e, head.Mark); err != nil {
			return err
		}
		if e.Kind == sequence.Voided {
			// A void holds: no Return gives the number back.
			if err := raiseFloor(b.Tx(), k, e.Range.Last); err != nil {
				return err
			}
		}
		out, err = appendEvent(ctx, b.Tx(), k, key, e, head.Mark, head.Mark)
		return err
	})
	return out, err
}

// Events returns up to limit records of key's journal after the record
// after (a [sequence.Journal]).
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]sequence.Event, error) {
	k, err := encodeKey(key)
	if err != nil {
		return nil, fmt.Errorf("boltseq: events: %w", err)
	}
	var out []sequence.Event
	err = s.view(ctx, "events of "+quoteKey(key), func(tx *bolt.Tx) error {
		out = out[:0]
		jb := tx.Bucket(journalBucket)
		if jb == nil {
			return nil
		}
		b := jb.Bucket(k)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for sk, v := c.Seek(binary.BigEndian.AppendUint64(nil, uint64(after+1))); sk != nil && len(out) < limit; sk, v = c.Next() {
			e, err := s.decode(key, sk, v)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

func (s *Store) decode(key string, sk, v []byte) (sequence.Event, error) {
	if len(sk) != 8 {
		return sequence.Event{}, fmt.Errorf("%w: %s: the journal of %s holds a record under %x, not an 8-byte number", ErrCorrupt, s.path, quoteKey(key), sk)
	}
	e, err := sequence.UnmarshalEvent(int64(binary.BigEndian.Uint64(sk)), v)
	if err != nil {
		return sequence.Event{}, fmt.Errorf("%w: %s: the journal of %s: %v", ErrCorrupt, s.path, quoteKey(key), err)
	}
	return e, nil
}

// Head returns where key's journal ends (a [sequence.Journal]).
func (s *Store) Head(ctx context.Context, key string) (sequence.Head, error) {
	k, err := encodeKey(key)
	if err != nil {
		return sequence.Head{}, fmt.Errorf("boltseq: head: %w", err)
	}
	var h sequence.Head
	err = s.view(ctx, "journal head of "+quoteKey(key), func(tx *bolt.Tx) error {
		h, err = headOf(tx, k)
		return err
	})
	return h, err
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [sequence.Pruner]),
// in one durable transaction.
func (s *Store) Prune(ctx context.Context, key string, p sequence.Event) (sequence.Event, error) {
	err := s.update(ctx, "prune", key, func(b *bolt.Bucket, k []byte) error {
		tx := b.Tx()
		head, err := headOf(tx, k)
		if err != nil {
			return err
		}
		var at sequence.Event
		var keys [][]byte
		if jb := tx.Bucket(journalBucket).Bucket(k); jb != nil {
			c := jb.Cursor()
			for sk, v := c.First(); sk != nil; sk, v = c.Next() {
				e, err := s.decode(key, sk, v)
				if err != nil {
					return err
				}
				if e.Seq > p.Seq {
					break
				}
				at = e
				keys = append(keys, append([]byte(nil), sk...))
			}
		}
		if err := sequence.CheckPrune(key, p, at, head); err != nil {
			return err
		}
		jb := tx.Bucket(journalBucket).Bucket(k)
		for _, sk := range keys {
			if err := jb.Delete(sk); err != nil {
				return err
			}
		}
		return jb.Put(binary.BigEndian.AppendUint64(nil, uint64(p.Seq)), sequence.MarshalEvent(p))
	})
	return p, err
}
