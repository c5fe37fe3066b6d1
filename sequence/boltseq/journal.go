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

// Journal returns the journals kept in the file's records (a
// [journal.Holder]).
func (s *Store) Journal() journal.Keeper { return journal.InRecords(s.Records()) }

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
