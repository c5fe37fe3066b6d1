package record

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// ErrConflict is wrapped by the error of an [Update] that lost its race
// with other writers [MaxAttempts] times in a row.
var ErrConflict = errors.New("record: too many concurrent writers")

// ErrExists is wrapped by the error of a [Tx.Create] of a key that holds
// a record.
var ErrExists = errors.New("record: the record exists")

// MaxAttempts is how many times Update runs its function before it gives
// up with [ErrConflict], if its context does not end first.
const MaxAttempts = 1000

// Update runs fn in a transaction over s and commits what it wrote if
// and only if nothing it read was written in between; otherwise it runs
// fn again over what is there now, after a short random pause. fn must
// have no effect but through tx, for it may run more than once. An error
// from fn ends Update with that error, and nothing is written.
//
// A transaction that writes nothing, and read in more than one call,
// commits its reads as conditions, so that what fn saw is one moment; so
// does one whose fn failed with an error wrapping [ErrExists] (a
// [Tx.Create] over a record there), which runs again when those reads no
// longer hold.
func Update(ctx context.Context, s Store, fn func(tx *Tx) error) error {
	pause := time.Millisecond
	for attempt := 1; ; attempt++ {
		tx := &Tx{ctx: ctx, s: s}
		if err := fn(tx); err != nil {
			if !errors.Is(err, ErrExists) || tx.gets <= 1 {
				return err
			}
			// A record fn was to create is there: an error if what fn
			// read before still holds, and otherwise a race, run again
			// (a head read, then a record appended after it by another
			// writer, then that record's key read).
			if ok, cerr := s.Commit(ctx, tx.cond(), nil); cerr != nil || ok {
				return err
			}
		} else {
			if !tx.wrote && tx.gets <= 1 {
				return nil
			}
			ok, err := s.Commit(ctx, tx.cond(), tx.final())
			if err != nil || ok {
				return err
			}
		}
		if attempt == MaxAttempts {
			return fmt.Errorf("record: lost %d races in a row: %w", attempt, ErrConflict)
		}
		t := time.NewTimer(pause/2 + rand.N(pause))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("record: lost %d races in a row: %w", attempt, context.Cause(ctx))
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// In runs fn once as part of a transaction a store runs itself, such as
// its allocator's: s is that transaction's view of the records, fn reads
// through it, and In returns what fn read (the conditions, for a store
// that compares versions when it commits, as etcd does) and what it
// wrote, each key once, for the store to apply in the same transaction.
// The store's transaction keeps other writers out, not In.
func In(ctx context.Context, s Store, fn func(tx *Tx) error) (cond []Record, ops []Op, err error) {
	tx := &Tx{ctx: ctx, s: s, native: true}
	if err := fn(tx); err != nil {
		return nil, nil, err
	}
	return tx.cond(), tx.final(), nil
}

// Tx is one attempt of an [Update]: it remembers the version of every
// record it reads, and keeps its writes until fn returns.
type Tx struct {
	ctx   context.Context
	s     Store
	read  map[string]Record // as read from the store
	local map[string][]byte // written here: a value, or nil for deleted
	gone  [][2]string       // ranges deleted here
	wrote bool              // final gives what, each key once
	gets  int
	now   time.Time
	// native: run by In, in a store's own transaction
	native bool
}

// Context returns the context of the Update.
func (t *Tx) Context() context.Context { return t.ctx }

// Get returns the records at keys as this transaction sees them: its own
// writes, or the store's records, read once (in one call for the keys not
// read before) and from then on the same. A record written here has
// Version -1.
func (t *Tx) Get(keys ...string) ([]Record, error) {
	var miss []string
	for _, k := range keys {
		if _, ok := t.read[k]; !ok && !t.written(k) {
			miss = append(miss, k)
		}
	}
	if len(miss) > 0 {
		rs, err := t.s.Get(t.ctx, miss...)
		if err != nil {
			return nil, err
		}
		if len(rs) != len(miss) {
			return nil, fmt.Errorf("record: %T.Get of %d keys returned %d records", t.s, len(miss), len(rs))
		}
		t.gets++
		if t.read == nil {
			t.read = map[string]Record{}
		}
		for i, r := range rs {
			r.Key = miss[i]
			t.read[miss[i]] = r
		}
	}
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = t.view(k)
	}
	return out, nil
}

// Get1 returns the record at key: [Tx.Get] of one key.
func (t *Tx) Get1(key string) (Record, error) {
	rs, err := t.Get(key)
	if err != nil {
		return Record{}, err
	}
	return rs[0], nil
}

func (t *Tx) written(k string) bool {
	if _, ok := t.local[k]; ok {
		return true
	}
	for _, g := range t.gone {
		if k >= g[0] && k < g[1] {
			return true
		}
	}
	return false
}

// view is key as this transaction sees it.
func (t *Tx) view(k string) Record {
	if v, ok := t.local[k]; ok {
		if v == nil {
			return Record{Key: k}
		}
		return Record{Key: k, Value: v, Version: -1}
	}
	for _, g := range t.gone {
		if k >= g[0] && k < g[1] {
			return Record{Key: k}
		}
	}
	return t.read[k]
}

// Scan returns up to limit records in [from, to) as the store holds them,
// and as this transaction changed them: its puts in the range are
// included, its deletes left out. The records scanned are not conditions
// of the commit (a store takes a bounded number of those: etcd 128): a
// change to one of them, or a record another process adds to the range,
// does not make the transaction run again. Guard what must be seen whole
// with a head record that every writer writes, and read it with Get.
func (t *Tx) Scan(from, to string, limit int) ([]Record, error) {
	n := limit
	if len(t.local) > 0 || len(t.gone) > 0 {
		n = 0 // some of the store's may be deleted here: read them all
	}
	rs, err := t.s.Scan(t.ctx, from, to, n)
	if err != nil {
		return nil, err
	}
	t.gets++
	byKey := map[string]Record{}
	for _, r := range rs {
		if old, ok := t.read[r.Key]; ok {
			// Read before with Get: answer what was read then, so fn
			// sees one moment (the commit fails if it changed).
			r = old
		}
		byKey[r.Key] = r
	}
	for k := range t.local {
		if k >= from && (to == "" || k < to) {
			byKey[k] = Record{}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k, r := range byKey {
		if t.written(k) {
			r = t.view(k)
			byKey[k] = r
		}
		if r.Exists() {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// Put writes v at key when the transaction commits.
func (t *Tx) Put(key string, v []byte) {
	if v == nil {
		v = []byte{}
	}
	if t.local == nil {
		t.local = map[string][]byte{}
	}
	t.local[key] = v
	t.wrote = true
}

// Create writes v at key when the transaction commits, if key is absent
// then. In an [Update] it reads key, and a record there is an error
// wrapping [ErrExists]. Under [In] it reads nothing: the absence is a
// condition (version 0) that the store checks in its own transaction,
// refusing it with an error wrapping ErrExists.
func (t *Tx) Create(key string, v []byte) error {
	if t.native {
		if _, ok := t.read[key]; !ok && !t.written(key) {
			if t.read == nil {
				t.read = map[string]Record{}
			}
			t.read[key] = Record{Key: key}
		}
	} else {
		r, err := t.Get1(key)
		if err != nil {
			return err
		}
		if r.Exists() {
			return fmt.Errorf("record: create %.64q: %w", key, ErrExists)
		}
	}
	t.Put(key, v)
	return nil
}

// Delete deletes key when the transaction commits.
func (t *Tx) Delete(key string) {
	if t.local == nil {
		t.local = map[string][]byte{}
	}
	t.local[key] = nil
	t.wrote = true
}

// DeleteRange deletes every key in [from, to) when the transaction
// commits, and forgets what it wrote there.
func (t *Tx) DeleteRange(from, to string) {
	for k := range t.local {
		if k >= from && k < to {
			delete(t.local, k)
		}
	}
	t.gone = append(t.gone, [2]string{from, to})
	t.wrote = true
}

// Now returns the store's clock, read once per transaction.
func (t *Tx) Now() (time.Time, error) {
	if t.now.IsZero() {
		now, err := t.s.Now(t.ctx)
		if err != nil {
			return time.Time{}, err
		}
		t.now = now
	}
	return t.now, nil
}

// Wrote reports whether the transaction has written anything.
func (t *Tx) Wrote() bool { return t.wrote }

// final is what the transaction wrote, each key once: its range deletes,
// cut around the keys it wrote after them, then the last write of each
// key. (etcd refuses a transaction that names a key twice.)
func (t *Tx) final() []Op {
	keys := make([]string, 0, len(t.local))
	for k := range t.local {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Op
	for _, g := range t.gone {
		from := g[0]
		for _, k := range keys {
			if k < from || k >= g[1] {
				continue
			}
			if from < k {
				out = append(out, DeleteRange(from, k))
			}
			from = k + "\x00"
		}
		if from < g[1] {
			out = append(out, DeleteRange(from, g[1]))
		}
	}
	for _, k := range keys {
		if v := t.local[k]; v != nil {
			out = append(out, Op{Key: k, Value: v})
		} else {
			out = append(out, Op{Key: k})
		}
	}
	return out
}

// cond is the transaction's read set, in key order.
func (t *Tx) cond() []Record {
	out := make([]Record, 0, len(t.read))
	for k, r := range t.read {
		out = append(out, Record{Key: k, Version: r.Version})
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}
