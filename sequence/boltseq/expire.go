package boltseq

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// The deadlines of expiring keys, in two buckets: by key, and by deadline
// then key (for the sweep, which reads them in order).
var (
	expiryBucket   = []byte("sn.expiry")    // k<key> -> deadline
	deadlineBucket = []byte("sn.deadlines") // deadline (8 bytes) k<key> -> nil
)

// now returns the process's clock, time.Now, by which [Store.Expire]
// keeps its deadlines, the clock of its records. It fails only on a closed
// Store or a done ctx.
func (s *Store) now(ctx context.Context) (time.Time, error) {
	err := s.view(ctx, "now", func(*bolt.Tx) error { return nil })
	return time.Now(), err
}

// Expire deletes key once ttl has passed: a [sequence.Expirer]. The
// deletion happens in a later Expire, which first deletes every key past
// its deadline; a ttl <= 0 deletes key at once. A deleted key's counter
// is gone, but its journal keeps its head and refuses to draw from it
// again (journal.ErrBehind): its numbers would be issued twice.
func (s *Store) Expire(ctx context.Context, key string, ttl time.Duration) error {
	k, err := encodeKey(key)
	if err != nil {
		return fmt.Errorf("boltseq: expire: %w", err)
	}
	now := time.Now()
	return s.updateTx(ctx, "expire "+quoteKey(key), func(tx *bolt.Tx) error {
		byKey, err := tx.CreateBucketIfNotExists(expiryBucket)
		if err != nil {
			return err
		}
		byTime, err := tx.CreateBucketIfNotExists(deadlineBucket)
		if err != nil {
			return err
		}
		seq := tx.Bucket(seqBucket)
		if old := byKey.Get(k); old != nil {
			if err := byTime.Delete(append(bytes.Clone(old), k...)); err != nil {
				return err
			}
		}
		// The sweep: the keys past their deadlines, in order. (They are
		// deleted after the cursor is done: deleting under a cursor can
		// make it skip the next entry.)
		var done [][]byte
		c := byTime.Cursor()
		for dk, _ := c.First(); dk != nil && len(dk) > 8 && int64(binary.BigEndian.Uint64(dk)) <= now.UnixNano(); dk, _ = c.Next() {
			done = append(done, bytes.Clone(dk))
		}
		for _, dk := range done {
			if err := byTime.Delete(dk); err != nil {
				return err
			}
			if err := seq.Delete(dk[8:]); err != nil {
				return err
			}
			if err := byKey.Delete(dk[8:]); err != nil {
				return err
			}
		}
		if ttl <= 0 {
			if err := byKey.Delete(k); err != nil {
				return err
			}
			return seq.Delete(k)
		}
		var d [8]byte
		binary.BigEndian.PutUint64(d[:], uint64(now.UnixNano()+min(int64(ttl), math.MaxInt64-now.UnixNano()))) // past 2262, at the end of time
		if err := byKey.Put(k, d[:]); err != nil {
			return err
		}
		return byTime.Put(append(d[:], k...), nil)
	})
}

// Return lowers key's high-water mark from r.Last to r.First-1 when it is
// r.Last still and no floor at or above r.First was raised, in one
// durable transaction: a [sequence.Returner]. A
// Segment returns its unused blocks at Close this way.
func (s *Store) Return(ctx context.Context, key string, r sequence.Range) (bool, error) {
	if r.First < 1 || r.Len() == 0 {
		return false, fmt.Errorf("boltseq: return %v of %s: an empty range: %w", r, quoteKey(key), sequence.ErrInvalidArgument)
	}
	done := false
	err := s.update(ctx, "return", key, func(b *bolt.Bucket, k []byte) error {
		last, err := s.get(b, k, key)
		if err != nil || last != r.Last {
			return err
		}
		if f := floorOf(b.Tx(), k); f >= r.First {
			return nil // a floor was raised into r: it stays reserved
		}
		done = true
		if err := put(b, k, r.First-1); err != nil {
			return err
		}
		return appendEvent(ctx, b.Tx(), key, last, r.First-1, journal.Event{Kind: journal.Returned, Range: r})
	})
	if errors.Is(err, journal.ErrVoid) {
		return false, nil // a number of r was voided: it stays used
	}
	return done, err
}

// floorBucket holds the highest floor raised per key (encoded as in the
// sequences' bucket), so that Return never takes back numbers at or below
// one.
var floorBucket = []byte("sn.floors")

// raiseFloor records floor as key k's, unless it has a higher one.
func raiseFloor(tx *bolt.Tx, k []byte, floor int64) error {
	b, err := tx.CreateBucketIfNotExists(floorBucket)
	if err != nil {
		return err
	}
	if floorOf(tx, k) >= floor {
		return nil
	}
	return put(b, k, floor)
}

// floorOf returns the highest floor raised for key k, or 0.
func floorOf(tx *bolt.Tx, k []byte) int64 {
	b := tx.Bucket(floorBucket)
	if b == nil {
		return 0
	}
	v := b.Get(k)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}
