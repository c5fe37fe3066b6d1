package boltseq

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence/catalog"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// Layouts of earlier releases, moved into the file's records at Open:
//
//   - the bucket "sn.catalog", entry ID -> the entry as JSON: its entries
//     become the catalog's records (see package catalog), keeping when
//     they were first enrolled and by whom, and the bucket is deleted, in
//     one transaction;
//   - the bucket "sn.records", name -> value: each becomes the record
//     "r/" and its name (see sequence.Remember), and the bucket is deleted;
//   - the bucket "sn.idem", idempotency key -> its claim as JSON: each
//     becomes a claim in the records (see claim.Records), and the bucket
//     is deleted;
//   - the buckets "sn.journal", a bucket per key (as in "sn.seq") of its
//     journal's records under their Seq in 8 big-endian bytes, and
//     "sn.jhead", the heads (seq 8, hash 32, mark 8): they become the
//     journal's records and heads (see package journal), unchanged, so
//     that anchors taken before still verify, and the buckets are
//     deleted.
var (
	legacyCatalog = []byte("sn.catalog")
	legacyRecords = []byte("sn.records")
	legacyIdem    = []byte("sn.idem")
	legacyJournal = []byte("sn.journal")
	legacyHeads   = []byte("sn.jhead")
)

// migrateJournals moves the journals of an earlier release into kv.
func migrateJournals(tx *bolt.Tx, kv *bolt.Bucket) error {
	var ops []record.Op
	if jb := tx.Bucket(legacyJournal); jb != nil {
		err := jb.ForEachBucket(func(k []byte) error {
			key := string(k[1:])
			return jb.Bucket(k).ForEach(func(sk, v []byte) error {
				if len(sk) != 8 || len(k) < 1 || k[0] != keyPrefix {
					return fmt.Errorf("%w: the journal of an earlier release holds %q under %q", ErrCorrupt, sk, k)
				}
				ops = append(ops, record.Put(journal.Key(key, int64(binary.BigEndian.Uint64(sk))), bytes.Clone(v)))
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	if hb := tx.Bucket(legacyHeads); hb != nil {
		err := hb.ForEach(func(k, v []byte) error {
			if len(v) != 48 || len(k) < 1 || k[0] != keyPrefix {
				return fmt.Errorf("%w: the journal head of %q of an earlier release has %d bytes, want 48", ErrCorrupt, k, len(v))
			}
			h := journal.Head{Seq: int64(binary.BigEndian.Uint64(v)), Mark: int64(binary.BigEndian.Uint64(v[40:]))}
			copy(h.Hash[:], v[8:40])
			ops = append(ops, record.Put(journal.HeadKey(string(k[1:])), journal.EncodeHead(h)))
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := applyRecords(kv, ops); err != nil {
		return err
	}
	for _, b := range [][]byte{legacyJournal, legacyHeads} {
		if tx.Bucket(b) != nil {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrate moves what earlier releases kept in their own buckets into the
// file's records, in tx.
func migrate(tx *bolt.Tx) error {
	kv, err := tx.CreateBucketIfNotExists(kvBucket)
	if err != nil {
		return err
	}
	if err := migrateJournals(tx, kv); err != nil {
		return err
	}
	if b := tx.Bucket(legacyRecords); b != nil {
		var ops []record.Op
		err := b.ForEach(func(k, v []byte) error {
			if kv.Get(append([]byte("r/"), k...)) == nil {
				ops = append(ops, record.Put("r/"+string(k), v))
			}
			return nil
		})
		if err == nil {
			err = applyRecords(kv, ops)
		}
		if err == nil {
			err = tx.DeleteBucket(legacyRecords)
		}
		if err != nil {
			return err
		}
	}
	if b := tx.Bucket(legacyIdem); b != nil {
		var ops []record.Op
		err := b.ForEach(func(k, v []byte) error {
			var m claim.Memo
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("%w: the claim of %q of an earlier release holds %.80q", ErrCorrupt, k, v)
			}
			if kv.Get(append([]byte("i/"), k...)) == nil {
				ops = append(ops, claim.Ops(string(k), m)...)
			}
			return nil
		})
		if err == nil {
			err = applyRecords(kv, ops)
		}
		if err == nil {
			err = tx.DeleteBucket(legacyIdem)
		}
		if err != nil {
			return err
		}
	}
	b := tx.Bucket(legacyCatalog)
	if b == nil {
		return nil
	}
	var es []catalog.Entry
	err = b.ForEach(func(k, v []byte) error {
		var e catalog.Entry
		if err := json.Unmarshal(v, &e); err != nil || e.ID != string(k) {
			return fmt.Errorf("%w: catalog entry %q of an earlier release holds %.80q", ErrCorrupt, k, v)
		}
		es = append(es, e)
		return nil
	})
	if err != nil {
		return err
	}
	ops, err := catalog.ImportOps(es, func(key string) bool { return kv.Get([]byte(key)) != nil })
	if err != nil {
		return err
	}
	if err := applyRecords(kv, ops); err != nil {
		return err
	}
	return tx.DeleteBucket(legacyCatalog)
}
