// Package boltseq is an embedded, durable [sequence.Allocator] that keeps its
// counters in a single local file, using bbolt (go.etcd.io/bbolt). It is the
// default store of the sn command line tool and suits any program that issues
// numbers from one machine without running a server.
//
// Wrap a [Store] in a [sequence.Segment] to serve most numbers from memory:
//
//	store, err := boltseq.Open("/var/lib/myapp/sn.db", boltseq.Options{})
//	if err != nil { ... }
//	defer store.Close()
//	gen, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: 100})
//
// # Durability
//
// Every [Store.Allocate] and [Store.Floor] is one bbolt read-write
// transaction, and bbolt syncs the file (fdatasync on Linux) before the
// transaction's Commit returns; boltseq never turns syncing off. So once
// Allocate has returned a range, a later Open of the file, after a process
// crash or a power failure, sees a high-water mark at or above the range's
// Last and never hands out those numbers again. A call that returned an
// error may or may not have reserved its numbers: that costs a gap, never a
// repeat. The guarantee is as good as the disk's own handling of fsync:
// keep the file on a local file system (flock and fsync over network file
// systems are not to be trusted).
//
// Only one [Store] at a time can have a file open: Open takes an exclusive
// advisory lock (flock) on it, which covers other processes and other Stores
// in the same process alike, and returns an error wrapping [ErrLocked] when
// it cannot get the lock within [Options.LockTimeout]. The lock is released
// by [Store.Close] or when the process ends, however it ends.
//
// # Performance
//
// Each Allocate waits for its own commit and fsync, so a Store makes a few
// hundred to a few thousand allocations per second, depending on the disk
// and hardly on how many goroutines call (about 3,000/s on an idle ext4
// virtual disk). Put a [sequence.Segment] in front of it, so that one
// transaction serves a whole block of numbers. bbolt's DB.Batch, which folds
// concurrent transactions into one commit, was measured and not used: it
// makes a lone caller, which is how a Segment calls, wait up to 10ms for
// company (6 to 17 times slower in our runs), and it gained only 1.5 to 2.5
// times with 16 to 64 goroutines calling at once (see
// BenchmarkAllocateBatch).
//
// # File format
//
// The file is a bbolt database holding two buckets:
//
//   - "sn.meta" holds the key "format" with the ASCII value "1", the version
//     of the layout described here (Open refuses a file with another
//     version), and the key "id", the file's identity ([Store.StoreID]):
//     "boltseq " and 32 random hexadecimal digits, written when the file is
//     created (or first opened by a version that writes it).
//   - "sn.seq" holds one entry per counter key. The bbolt key is the byte 'k'
//     (0x6B) followed by the counter key's bytes, unchanged; the prefix lets
//     the empty counter key be stored, since bbolt has no zero-length keys.
//     So counter keys may be up to [MaxKeyLen] bytes of any content. The
//     value is the key's high-water mark, the largest number ever reserved
//     (or set by a floor), as an 8-byte big-endian unsigned integer no
//     greater than math.MaxInt64. A key without an entry has mark 0, so its
//     first number is 1.
//
// A value of another length, or above math.MaxInt64, is reported as an error
// wrapping [ErrCorrupt]; it is never read as zero.
//
// Other buckets hold what a store keeps beside its counters: "sn.floors"
// (the highest floor per key), "sn.expiry" and "sn.deadlines" (expiring
// keys) and "sn.kv", the records of package record (see [Store.Records]):
// the catalog, named records, the claims of idempotency keys and the
// journals (package journal), each under its key, with its version in 8
// big-endian bytes before the value. The buckets "sn.catalog",
// "sn.records", "sn.idem", "sn.journal" and "sn.jhead" of earlier
// releases are moved into "sn.kv" at Open.
package boltseq

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// MaxKeyLen is the longest counter key, in bytes, that a [Store] accepts:
// bbolt's key limit less the one-byte prefix described in the package
// documentation.
const MaxKeyLen = bolt.MaxKeySize - 1

const (
	// DefaultLockTimeout is the default for [Options.LockTimeout].
	DefaultLockTimeout = time.Second
	// DefaultMode is the default for [Options.Mode].
	DefaultMode os.FileMode = 0o600
)

const formatVersion = "1"

// lockRetryInterval is how often bbolt retries a file lock (its
// flockRetryTimeout).
const lockRetryInterval = 50 * time.Millisecond

var (
	metaBucket = []byte("sn.meta")
	formatKey  = []byte("format")
	idKey      = []byte("id")
	seqBucket  = []byte("sn.seq")
)

// keyPrefix is the first byte of every bbolt key in the "sn.seq" bucket.
const keyPrefix = 'k'

var (
	// ErrLocked means another process, or another [Store] in this process,
	// has the file open. Open returns an error wrapping ErrLocked whose
	// message names the file and how long Open waited.
	ErrLocked = errors.New("boltseq: file is in use by another process")

	// ErrCorrupt means the file holds a value boltseq did not write: a
	// high-water mark of the wrong length or beyond math.MaxInt64, or a
	// format marker it does not know. Nothing is read from or written to
	// such an entry; the error names the file and the key.
	ErrCorrupt = errors.New("boltseq: corrupt file")
)

// Options configures [Open]. The zero value, like a nil *Options, gives the
// defaults.
type Options struct {
	// LockTimeout is how long Open waits for another process (or another
	// Store in this process) to release the file before it returns an error
	// wrapping ErrLocked. Zero means DefaultLockTimeout (1s); a negative
	// value means try once and do not wait.
	LockTimeout time.Duration

	// Mode is the permission of the file when Open creates it.
	// Zero means DefaultMode (0600).
	Mode os.FileMode
}

// Store is a durable [sequence.Allocator] backed by one bbolt file, opened
// with [Open]. It also implements [sequence.Floorer] and io.Closer. A Store
// is safe for concurrent use by multiple goroutines; its writes are
// serialised by bbolt's single writer, and each waits for its own fsync.
// It holds the file's lock until [Store.Close].
type Store struct {
	db   *bolt.DB
	path string
	id   string // the file's identity

	// write runs one read-write transaction: db.Update. (db.Batch was
	// measured and rejected; see BenchmarkAllocateBatch.)
	write func(func(*bolt.Tx) error) error

	// mu is held shared by every operation and exclusively by Close, so
	// Close waits for operations under way and no operation starts after it.
	mu     sync.RWMutex
	closed bool
}

// KeyInfo describes one counter key in a [Store]; see [Store.Keys].
type KeyInfo struct {
	Key  string // the counter key
	Last int64  // its high-water mark: the largest number reserved so far
}

// Open opens the store in the file at path, creating the file if it does
// not exist. The directory holding it must exist already. The zero
// Options are the defaults.
//
// Open returns an error wrapping [ErrLocked] when another process or Store
// holds the file for longer than [Options.LockTimeout], an error wrapping
// fs.ErrNotExist when the directory is missing, and an error wrapping
// [ErrCorrupt] when the file is a bbolt database in an unknown sn format.
// A file that is not a bbolt database at all gives bbolt's own error,
// wrapped; Open never overwrites such a file.
func Open(path string, o Options) (*Store, error) {
	if o.LockTimeout == 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Mode == 0 {
		o.Mode = DefaultMode
	}
	if path == "" {
		return nil, fmt.Errorf("boltseq: open: empty path: %w", sequence.ErrInvalidArgument)
	}

	// bbolt retries the lock every 50ms and gives up once the next retry
	// would pass its timeout, and it waits forever on 0. Adding one retry
	// interval makes Open wait at least LockTimeout; a negative LockTimeout
	// gives one attempt.
	timeout := max(o.LockTimeout, 0) + lockRetryInterval
	db, err := bolt.Open(path, o.Mode, &bolt.Options{Timeout: timeout})
	if err != nil {
		var pathErr *fs.PathError
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, &lockedError{path: path, waited: max(o.LockTimeout, 0)}
		case errors.Is(err, fs.ErrNotExist) && !dirExists(filepath.Dir(path)):
			return nil, fmt.Errorf("boltseq: %w (the directory %s must exist)", err, filepath.Dir(path))
		case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
			return nil, fmt.Errorf("boltseq: open %s: not a bbolt store file: %w", path, err)
		case errors.As(err, &pathErr) && pathErr.Op == "open" && pathErr.Path == path:
			return nil, fmt.Errorf("boltseq: %w", err) // it names the path already
		default:
			return nil, fmt.Errorf("boltseq: open %s: %w", path, err)
		}
	}
	id, err := initFile(db, path)
	if err != nil {
		_ = db.Close()
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("boltseq: open %s: %w", path, err)
	}
	return &Store{db: db, path: path, id: id, write: db.Update}, nil
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// initFile creates the buckets and the identity of a new file, or checks
// those of an existing one and moves what an earlier release kept in its
// own buckets into the records (migrate), and returns the identity.
// Opening a file that is already set up writes nothing.
func initFile(db *bolt.DB, path string) (id string, err error) {
	legacy := false
	check := func(tx *bolt.Tx) error {
		legacy = tx.Bucket(legacyCatalog) != nil || tx.Bucket(legacyRecords) != nil || tx.Bucket(legacyIdem) != nil
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			return nil
		}
		if v := meta.Get(formatKey); string(v) != formatVersion {
			return fmt.Errorf("%w: %s: unknown format %q in bucket %q (this version reads %q)",
				ErrCorrupt, path, v, metaBucket, formatVersion)
		}
		if tx.Bucket(seqBucket) == nil {
			return fmt.Errorf("%w: %s: bucket %q is missing", ErrCorrupt, path, seqBucket)
		}
		id = string(meta.Get(idKey))
		return nil
	}
	// A read transaction first, so that opening an initialised file costs
	// no write and no fsync.
	if err := db.View(check); err != nil || id != "" && !legacy {
		return id, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		if id != "" {
			return migrate(tx)
		}
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if err := meta.Put(formatKey, []byte(formatVersion)); err != nil {
			return err
		}
		id = fmt.Sprintf("boltseq %016x%016x", rand.Uint64(), rand.Uint64())
		if err := meta.Put(idKey, []byte(id)); err != nil {
			return err
		}
		_, err = tx.CreateBucketIfNotExists(seqBucket)
		return err
	})
	return id, err
}

// StoreID returns the file's identity, written when it was created: a copy
// of the file has the same one.
func (s *Store) StoreID(context.Context) (string, error) { return s.id, nil }

// lockedError is the error Open returns when the file lock is held.
type lockedError struct {
	path   string
	waited time.Duration
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("boltseq: %s is in use by another process (waited %s)", e.path, e.waited)
}

func (e *lockedError) Unwrap() error { return ErrLocked }

// Path returns the path of the store's file, as given to [Open].
func (s *Store) Path() string { return s.path }

// Close releases the file and its lock, after waiting for operations under
// way. Later calls to any method, Close included, return an error wrapping
// [sequence.ErrClosed].
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("boltseq: close %s: %w", s.path, sequence.ErrClosed)
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("boltseq: close %s: %w", s.path, err)
	}
	return nil
}

// Allocate reserves the n numbers after key's high-water mark and raises the
// mark past them, in one durable transaction: when Allocate returns a
// [sequence.Range], the reservation is on disk. The first range of a new key
// starts at 1. n < 1, or a key longer than [MaxKeyLen], gives an error
// wrapping [sequence.ErrInvalidArgument]; a range that would go past
// math.MaxInt64 gives an error wrapping [sequence.ErrExhausted] and reserves
// nothing; a damaged entry gives [ErrCorrupt]. Allocate returns ctx.Err() if
// ctx is done before its transaction starts, and an error wrapping
// [sequence.ErrClosed] after [Store.Close].
func (s *Store) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if n < 1 {
		return sequence.Range{}, fmt.Errorf("boltseq: allocate %s with n=%d: %w", quoteKey(key), n, sequence.ErrInvalidArgument)
	}
	var r sequence.Range
	err := s.update(ctx, "allocate", key, func(b *bolt.Bucket, k []byte) error {
		// Every variable the function sets is assigned afresh on each call,
		// so it stays correct if the transaction is retried.
		last, err := s.get(b, k, key)
		if err != nil {
			return err
		}
		if last > math.MaxInt64-n {
			return fmt.Errorf("boltseq: allocate %s: %d numbers after %d would pass %d: %w",
				quoteKey(key), n, last, int64(math.MaxInt64), sequence.ErrExhausted)
		}
		r = sequence.Range{First: last + 1, Last: last + n}
		if err := put(b, k, r.Last); err != nil {
			return err
		}
		return appendEvent(ctx, b.Tx(), key, last, r.Last, journal.Event{Kind: journal.AllocateKind(ctx), Range: r})
	})
	if err != nil {
		return sequence.Range{}, err
	}
	return r, nil
}

// Floor raises key's high-water mark to floor if it is lower, so that every
// number allocated afterwards is greater than floor; it never lowers the
// mark. Like Allocate it is one durable transaction. A negative floor gives
// an error wrapping [sequence.ErrInvalidArgument].
func (s *Store) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("boltseq: floor %s to %d: negative floor: %w", quoteKey(key), floor, sequence.ErrInvalidArgument)
	}
	return s.update(ctx, "floor", key, func(b *bolt.Bucket, k []byte) error {
		if err := raiseFloor(b.Tx(), k, floor); err != nil {
			return err
		}
		last, err := s.get(b, k, key)
		if err != nil || last >= floor {
			return err
		}
		if err := put(b, k, floor); err != nil {
			return err
		}
		return appendEvent(ctx, b.Tx(), key, last, floor, journal.Event{Kind: journal.Floored, Range: sequence.Range{First: last + 1, Last: floor}})
	})
}

// Last returns key's high-water mark: the last number reserved for it, or 0
// for a key never used. Numbers up to the mark may still be unissued in a
// [sequence.Segment] somewhere, so the mark is an upper bound on what has
// been issued, for diagnostics. Last and [Store.Keys] use read-only
// transactions, which do not wait for writers.
func (s *Store) Last(ctx context.Context, key string) (int64, error) {
	k, err := encodeKey(key)
	if err != nil {
		return 0, fmt.Errorf("boltseq: last: %w", err)
	}
	var last int64
	err = s.view(ctx, "last "+quoteKey(key), func(tx *bolt.Tx) error {
		last, err = s.get(tx.Bucket(seqBucket), k, key)
		return err
	})
	return last, err
}

// Keys returns every counter key in the store with its high-water mark, in
// the byte order of the keys.
func (s *Store) Keys(ctx context.Context) ([]KeyInfo, error) {
	var keys []KeyInfo
	err := s.view(ctx, "keys", func(tx *bolt.Tx) error {
		keys = keys[:0]
		b := tx.Bucket(seqBucket)
		return b.ForEach(func(k, _ []byte) error {
			if len(k) == 0 || k[0] != keyPrefix {
				return fmt.Errorf("%w: %s: bucket %q holds the key %q, which lacks the prefix %q",
					ErrCorrupt, s.path, seqBucket, k, keyPrefix)
			}
			key := string(k[1:])
			last, err := s.get(b, k, key)
			if err != nil {
				return err
			}
			keys = append(keys, KeyInfo{Key: key, Last: last})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// update runs fn on key's entry in one read-write transaction.
func (s *Store) update(ctx context.Context, op, key string, fn func(b *bolt.Bucket, k []byte) error) error {
	k, err := encodeKey(key)
	if err != nil {
		return fmt.Errorf("boltseq: %s: %w", op, err)
	}
	return s.updateTx(ctx, op+" "+quoteKey(key), func(tx *bolt.Tx) error { return fn(tx.Bucket(seqBucket), k) })
}

// updateTx runs fn in one read-write transaction.
func (s *Store) updateTx(ctx context.Context, what string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("boltseq: %s: %w", what, sequence.ErrClosed)
	}
	err := s.write(func(tx *bolt.Tx) error {
		// The transaction may have waited for other writers; a caller that
		// gave up meanwhile gets neither a write nor an fsync.
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(tx)
	})
	return wrapTxError(what, err)
}

// view runs fn in one read-only transaction.
func (s *Store) view(ctx context.Context, what string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("boltseq: %s: %w", what, sequence.ErrClosed)
	}
	return wrapTxError(what, s.db.View(fn))
}

// wrapTxError gives bbolt's errors the package prefix and says what failed;
// the errors this package makes inside transactions already say so, and the
// context's errors pass unchanged.
func wrapTxError(what string, err error) error {
	switch {
	case err == nil,
		errors.Is(err, ErrCorrupt),
		errors.Is(err, sequence.ErrExhausted),
		errors.Is(err, context.Canceled),
		errors.Is(err, context.DeadlineExceeded):
		return err
	default:
		return fmt.Errorf("boltseq: %s: %w", what, err)
	}
}

// encodeKey returns the bbolt key of a counter key.
func encodeKey(key string) ([]byte, error) {
	if len(key) > MaxKeyLen {
		return nil, fmt.Errorf("key of %d bytes is longer than %d: %w", len(key), MaxKeyLen, sequence.ErrInvalidArgument)
	}
	k := make([]byte, 1+len(key))
	k[0] = keyPrefix
	copy(k[1:], key)
	return k, nil
}

// get returns the high-water mark stored under k, the encoding of key, or 0
// if there is none.
func (s *Store) get(b *bolt.Bucket, k []byte, key string) (int64, error) {
	v := b.Get(k)
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %s: key %s has a %d-byte value, want 8",
			ErrCorrupt, s.path, quoteKey(key), len(v))
	}
	u := binary.BigEndian.Uint64(v)
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s: key %s has the value %d, above the largest number %d",
			ErrCorrupt, s.path, quoteKey(key), u, int64(math.MaxInt64))
	}
	return int64(u), nil
}

// put stores last as the high-water mark under k.
func put(b *bolt.Bucket, k []byte, last int64) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(last))
	return b.Put(k, v[:])
}

// quoteKey quotes a key for an error message, shortening a long one.
func quoteKey(key string) string {
	const show = 64
	if len(key) <= show {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q... (%d bytes)", key[:show], len(key))
}
