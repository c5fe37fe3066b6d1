package boltseq

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence/record"
)

// kvBucket holds the file's records (see package record): key -> its
// version in 8 bytes, big-endian, then the value. The bucket's sequence
// gives the versions, so none is given twice.
var kvBucket = []byte("sn.kv")

// Records returns the file's records: a [record.Store] whose clock is
// this machine's, for only one process holds the file.
func (s *Store) Records() record.Store { return records{s} }

type records struct{ s *Store }

func (r records) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	for _, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
	}
	var out []record.Record
	err := r.s.view(ctx, "read records", func(tx *bolt.Tx) (err error) {
		out, err = txRecords{tx}.Get(ctx, keys...)
		return err
	})
	return out, err
}

func decodeRecord(k string, v []byte) (record.Record, error) {
	if v == nil {
		return record.Record{Key: k}, nil
	}
	if len(v) < 8 || binary.BigEndian.Uint64(v) == 0 {
		return record.Record{}, fmt.Errorf("%w: record %.64q holds %d bytes without a version", ErrCorrupt, k, len(v))
	}
	return record.Record{Key: k, Value: bytes.Clone(v[8:]), Version: int64(binary.BigEndian.Uint64(v))}, nil
}

func (r records) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	var out []record.Record
	err := r.s.view(ctx, "scan records", func(tx *bolt.Tx) (err error) {
		out, err = txRecords{tx}.Scan(ctx, from, to, limit)
		return err
	})
	return out, err
}

func (r records) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if err := record.Check(cond, ops); err != nil {
		return false, err
	}
	ok := false
	err := r.s.updateTx(ctx, "write records", func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(kvBucket)
		if err != nil {
			return err
		}
		for _, c := range cond {
			got, err := decodeRecord(c.Key, b.Get([]byte(c.Key)))
			if err != nil {
				return err
			}
			if got.Version != c.Version {
				return nil
			}
		}
		ok = true
		return applyRecords(b, ops)
	})
	return ok && err == nil, err
}

// applyRecords writes ops in b, in a transaction that checked their
// conditions.
func applyRecords(b *bolt.Bucket, ops []record.Op) error {
	for _, o := range ops {
		switch {
		case o.Value != nil:
			ver, err := b.NextSequence()
			if err != nil {
				return err
			}
			v := make([]byte, 8+len(o.Value))
			binary.BigEndian.PutUint64(v, ver)
			copy(v[8:], o.Value)
			if err := b.Put([]byte(o.Key), v); err != nil {
				return err
			}
		case o.End != "":
			c := b.Cursor()
			for k, _ := c.Seek([]byte(o.Key)); k != nil && string(k) < o.End; k, _ = c.Seek([]byte(o.Key)) {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		default:
			if err := b.Delete([]byte(o.Key)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r records) Now(ctx context.Context) (time.Time, error) { return r.s.now(ctx) }
