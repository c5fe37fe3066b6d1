// Package record is the one primitive a durable store owes above its
// allocator: versioned records, read and written under conditions.
//
// Every promise sn keeps in a store beyond its counters — the catalog of
// series, the hash-chained journal, idempotency claims, floors, worker-id
// leases — is the same small algorithm: read some records, decide, and
// write if nobody wrote them in between. A [Store] gives the three moves
// and the store's clock; [Update] runs the algorithm, trying again when
// another process wrote first, in the manner of etcd's concurrency.STM.
// The promises are written once, above it, and every store keeps them
// alike.
//
// A store implements Store natively: etcd as one Txn guarded by
// ModRevision compares, bbolt as one Update transaction, SQL as a
// (key, value, version) table written in one transaction, Redis as one Lua
// script, memory as a map ([Memory]). Package recordtest checks an
// implementation.
package record

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Record is a value kept under a key, with its version.
type Record struct {
	Key   string
	Value []byte
	// Version changes at every write of Key and is never given to the
	// key again, not even after a delete: a condition on it holds only
	// while nobody wrote the record. 0 is a record that does not exist.
	Version int64
}

// Exists reports whether the record exists.
func (r Record) Exists() bool { return r.Version != 0 }

// Op is one write of a [Store.Commit]: a put of Value at Key, or, when
// Value is nil, a delete of Key, or of every key in [Key, End) when End is
// set.
type Op struct {
	Key   string
	Value []byte
	End   string
}

// Put returns the Op that writes v at key. A nil v is written as empty.
func Put(key string, v []byte) Op {
	if v == nil {
		v = []byte{}
	}
	return Op{Key: key, Value: v}
}

// Delete returns the Op that deletes key.
func Delete(key string) Op { return Op{Key: key} }

// DeleteRange returns the Op that deletes every key in [from, to).
func DeleteRange(from, to string) Op { return Op{Key: from, End: to} }

// Store keeps versioned records. It is safe for concurrent use, and every
// process that opens the same store sees the same records.
//
// Keys are strings of at most [MaxKey] bytes, values at most [MaxValue];
// a store refuses others with an error wrapping [ErrInvalid]. A server
// may refuse less: etcd takes a request of at most its
// --max-request-bytes (1.5 MiB by default).
type Store interface {
	// Get returns the records at keys, in the order given: one read, at
	// one moment. A key with no record gives Record{Key: key}.
	Get(ctx context.Context, keys ...string) ([]Record, error)
	// Scan returns up to limit records whose keys are in [from, to), in
	// key order, read at one moment; to "" is the end of the keys. A
	// record written between the calls of a scan in pages may or may not
	// be seen: guard what must be seen whole with a record every writer
	// writes (a head).
	Scan(ctx context.Context, from, to string, limit int) ([]Record, error)
	// Commit applies ops, in order, all or none, if and only if every
	// record of cond still has the Version given (0: does not exist); it
	// reports whether it did. A Commit whose answer was lost may have
	// been applied: the error wraps the store's, and the caller reads
	// again to see.
	Commit(ctx context.Context, cond []Record, ops []Op) (bool, error)
	// Now returns the time by the store's clock, shared by every process
	// that opens it, so that leases and claims are timed alike on every
	// machine.
	Now(ctx context.Context) (time.Time, error)
}

// Holder is implemented by an allocator, or a wrapper of one, whose
// store keeps records: the one thing a wrapper forwards.
type Holder interface {
	Records() Store
}

// Of returns the records of v: v itself if it is a Store, or what its
// Records method returns; nil if it keeps none.
func Of(v any) Store {
	switch x := v.(type) {
	case Store:
		return x
	case Holder:
		return x.Records()
	}
	return nil
}

// Limits of keys and values: a key holds an idempotency key with its
// series (1,279 bytes), and a value a claim's answer of up to 4 MiB
// written as JSON, its quotes escaped.
const (
	MaxKey   = 1536
	MaxValue = 9 << 20
)

// ErrInvalid is wrapped by the error of a key or value a store does not
// take.
var ErrInvalid = errors.New("record: invalid")

// Check returns an error wrapping [ErrInvalid] for a bad key or op.
func Check(cond []Record, ops []Op) error {
	for _, r := range cond {
		if err := CheckKey(r.Key); err != nil {
			return err
		}
	}
	for _, o := range ops {
		if o.End != "" && len(o.Key) == MaxKey+1 {
			// A range that starts just after a key of MaxKey bytes, as
			// Update cuts one around a key it writes.
		} else if err := CheckKey(o.Key); err != nil {
			return err
		}
		if len(o.Value) > MaxValue {
			return fmt.Errorf("record: a value of %d bytes at %.64q, more than %d: %w", len(o.Value), o.Key, MaxValue, ErrInvalid)
		}
		if o.End != "" && (o.Value != nil || o.End <= o.Key || len(o.End) > MaxKey+1) {
			return fmt.Errorf("record: a delete of [%.64q, %.64q) with a value, or ending before it starts: %w", o.Key, o.End, ErrInvalid)
		}
	}
	return nil
}

// CheckKey returns an error wrapping [ErrInvalid] for a key a store does
// not take.
func CheckKey(k string) error {
	if k == "" || len(k) > MaxKey {
		return fmt.Errorf("record: a key of %d bytes (1 to %d): %.64q: %w", len(k), MaxKey, k, ErrInvalid)
	}
	return nil
}

// PrefixEnd returns the first key after every key that starts with p: the
// end of a Scan of p.
func PrefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
