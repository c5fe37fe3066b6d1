package boltseq

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
)

// catalogBucket holds the store's catalog: entry ID -> the entry as JSON.
var catalogBucket = []byte("sn.catalog")

// Enroll records e in the store's catalog unless an entry with its ID is
// there, after check accepts every entry recorded: a [sequence.Catalog].
// check runs inside the write transaction, so enrollments of every
// process that opens the file are serialised. A file made before the
// catalog gets one at its first enrollment.
func (s *Store) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	if err := sequence.CheckEntry(e); err != nil {
		return sequence.Entry{}, err
	}
	var got sequence.Entry
	found := false
	err := s.view(ctx, "read the catalog", func(tx *bolt.Tx) error {
		var err error
		got, found, err = entry(tx, e.ID)
		return err
	})
	if err != nil || found {
		return got, err
	}
	var refused error
	added := false
	err = s.updateTx(ctx, "enroll in the catalog", func(tx *bolt.Tx) error {
		var err error
		if got, found, err = entry(tx, e.ID); err != nil || found {
			return err
		}
		es, err := entries(tx)
		if err != nil {
			return err
		}
		if refused = check(es); refused != nil {
			return refused
		}
		b, err := tx.CreateBucketIfNotExists(catalogBucket)
		if err != nil {
			return err
		}
		e.First = time.Now().UTC()
		v, err := json.Marshal(e)
		if err != nil {
			return err
		}
		got, added = e, true
		return b.Put([]byte(e.ID), v)
	})
	if refused != nil {
		return sequence.Entry{}, refused
	}
	if err == nil && added {
		sequence.NoteCatalog(ctx, s, sequence.Enrolled, got)
	}
	return got, err
}

// Entries returns the store's catalog, oldest first: a [sequence.Catalog].
func (s *Store) Entries(ctx context.Context) ([]sequence.Entry, error) {
	var es []sequence.Entry
	err := s.view(ctx, "read the catalog", func(tx *bolt.Tx) error {
		var err error
		es, err = entries(tx)
		return err
	})
	return es, err
}

// Forget removes the entry with id from the store's catalog: a
// [sequence.Catalog].
func (s *Store) Forget(ctx context.Context, id string) (bool, error) {
	found := false
	err := s.updateTx(ctx, "forget a catalog entry", func(tx *bolt.Tx) error {
		b := tx.Bucket(catalogBucket)
		if b == nil || b.Get([]byte(id)) == nil {
			return nil
		}
		found = true
		return b.Delete([]byte(id))
	})
	if err == nil && found {
		sequence.NoteCatalog(ctx, s, sequence.Forgotten, sequence.Entry{ID: id})
	}
	return found, err
}

func entry(tx *bolt.Tx, id string) (sequence.Entry, bool, error) {
	b := tx.Bucket(catalogBucket)
	if b == nil {
		return sequence.Entry{}, false, nil
	}
	v := b.Get([]byte(id))
	if v == nil {
		return sequence.Entry{}, false, nil
	}
	var e sequence.Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, false, fmt.Errorf("%w: catalog entry %q: %v", ErrCorrupt, id, err)
	}
	return e, true, nil
}

func entries(tx *bolt.Tx) ([]sequence.Entry, error) {
	b := tx.Bucket(catalogBucket)
	if b == nil {
		return nil, nil
	}
	var es []sequence.Entry
	err := b.ForEach(func(k, v []byte) error {
		var e sequence.Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("%w: catalog entry %q: %v", ErrCorrupt, k, err)
		}
		es = append(es, e)
		return nil
	})
	sequence.SortEntries(es)
	return es, err
}

var _ sequence.Catalog = (*Store)(nil)
