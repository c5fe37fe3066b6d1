package boltseq

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// The journals are kept in the file's records by package journal; a
// change to a counter appends its record in the transaction that writes
// the counter.

// appendEvent chains es after the last record of key's journal, with
// before and mark the key's mark before and after, in tx.
func appendEvent(ctx context.Context, tx *bolt.Tx, key string, before, mark int64, es ...journal.Event) error {
	err := inRecords(ctx, tx, func(rt *record.Tx) error {
		_, err := journal.Append(rt, key, before, mark, es...)
		return err
	})
	return journal.Overwrite(key, err)
}

// inRecords runs fn over the file's records in tx (see [record.In]) and
// applies what it wrote.
func inRecords(ctx context.Context, tx *bolt.Tx, fn func(rt *record.Tx) error) error {
	cond, ops, err := record.In(ctx, txRecords{tx}, fn)
	if err != nil || len(ops) == 0 {
		return err
	}
	kv, err := tx.CreateBucketIfNotExists(kvBucket)
	if err != nil {
		return err
	}
	for _, c := range cond {
		// Read in this transaction, so they hold; but a record created
		// must still be absent.
		got, err := decodeRecord(c.Key, kv.Get([]byte(c.Key)))
		if err != nil {
			return err
		}
		if got.Version != c.Version {
			return fmt.Errorf("boltseq: record %.64q: %w", c.Key, record.ErrExists)
		}
	}
	return applyRecords(kv, ops)
}

// Note appends e to key's journal, in one durable transaction: a
// [journal.Keeper]. A void raises the key's floor, so that no Return
// gives the number back.
func (s *Store) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	var out journal.Event
	err := s.update(ctx, "note", key, func(b *bolt.Bucket, k []byte) error {
		return inRecords(ctx, b.Tx(), func(rt *record.Tx) (err error) {
			if out, err = journal.Note(rt, key, e); err != nil || e.Kind != journal.Voided {
				return err
			}
			return raiseFloor(b.Tx(), k, e.Range.Last)
		})
	})
	return out, journal.Overwrite(key, err)
}

// Events returns up to limit records of key's journal after the record
// after (a [journal.Keeper]).
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	return journal.Events(ctx, s.Records(), key, after, limit)
}

// Head returns where key's journal ends (a [journal.Keeper]).
func (s *Store) Head(ctx context.Context, key string) (journal.Head, error) {
	return journal.ReadHead(ctx, s.Records(), key)
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [journal.Pruner]),
// in one durable transaction.
func (s *Store) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	return journal.Prune(ctx, s.Records(), key, p)
}

// txRecords are the file's records in a transaction the Store runs, as
// [record.In] reads them.
type txRecords struct{ tx *bolt.Tx }

func (r txRecords) Get(_ context.Context, keys ...string) ([]record.Record, error) {
	b := r.tx.Bucket(kvBucket)
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		out[i] = record.Record{Key: k}
		if b == nil {
			continue
		}
		var err error
		if out[i], err = decodeRecord(k, b.Get([]byte(k))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r txRecords) Scan(_ context.Context, from, to string, limit int) ([]record.Record, error) {
	b := r.tx.Bucket(kvBucket)
	if b == nil {
		return nil, nil
	}
	var out []record.Record
	c := b.Cursor()
	for k, v := c.Seek([]byte(from)); k != nil && (to == "" || string(k) < to); k, v = c.Next() {
		if limit > 0 && len(out) == limit {
			break
		}
		rec, err := decodeRecord(string(k), v)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

func (txRecords) Commit(context.Context, []record.Record, []record.Op) (bool, error) {
	return false, errors.ErrUnsupported
}

func (txRecords) Now(context.Context) (time.Time, error) { return time.Now(), nil }
