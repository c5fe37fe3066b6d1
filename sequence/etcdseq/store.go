package etcdseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// DefaultPrefix is the prefix of the Store's keys when Options.Prefix is
// empty.
const DefaultPrefix = "sn/"

// MaxKeyLen is the longest key, in bytes, a Store takes: etcd keeps every
// key in memory, in an index of all of them.
const MaxKeyLen = 64 << 10

// Defaults of Options.
const (
	DefaultAttemptTimeout = 2 * time.Second
	DefaultTimeout        = 10 * time.Second
)

// Options configures New. The zero value gives the defaults.
type Options struct {
	// Prefix is put before every key the Store writes. It ends with "/",
	// and none of its parts between slashes is empty, ".", "..", or a
	// name the Store uses for its own keys (n, r, cat, w, x, id, clock), so that
	// Stores with other prefixes in one cluster are independent ledgers:
	// none writes under another's keys.
	// default: DefaultPrefix ("sn/").
	Prefix string

	// AttemptTimeout bounds one request to etcd. The client sends a
	// request on a connection to a member that died, and waits on it, until
	// the request's deadline: the next attempt goes to another member. It
	// must be less than Timeout, so that a call has a second attempt.
	// default: DefaultAttemptTimeout (2s), or Timeout/4 if that is less.
	AttemptTimeout time.Duration

	// Timeout bounds a call: past it the call fails with an error wrapping
	// sequence.ErrUnavailable, unless the caller's context ends first. It
	// counts the attempts etcd did not answer and those whose transaction
	// lost a race with another process's (each tried again after a short
	// random pause); the error says which. Under the default, a race is
	// lost that often only under contention no deployment should see: a
	// Segment draws one range per block.
	// default: DefaultTimeout (10s).
	Timeout time.Duration
}

// Store is a durable [sequence.Allocator] over an etcd cluster: a ledger
// whose counters are etcd keys (see the package doc). A Store is safe for
// concurrent use, and any number of processes may share one cluster and
// prefix. It does not own the client, which the caller closes.
type Store struct {
	cli    *clientv3.Client
	prefix string
	opts   Options
}

// New returns a Store over cli, which it does not own. It checks its
// arguments and nothing else: call [Store.Ping] to see that the cluster
// answers.
func New(cli *clientv3.Client, o Options) (*Store, error) {
	if cli == nil {
		return nil, fmt.Errorf("etcdseq: New with a nil client: %w", sequence.ErrInvalidArgument)
	}
	if o.AttemptTimeout < 0 || o.Timeout < 0 {
		return nil, fmt.Errorf("etcdseq: Options{AttemptTimeout: %v, Timeout: %v}: negative: %w", o.AttemptTimeout, o.Timeout, sequence.ErrInvalidArgument)
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.AttemptTimeout == 0 {
		o.AttemptTimeout = min(DefaultAttemptTimeout, o.Timeout/4)
	}
	if o.AttemptTimeout >= o.Timeout {
		return nil, fmt.Errorf("etcdseq: Options{AttemptTimeout: %v, Timeout: %v}: an attempt must be shorter than the call, so that a call has a second attempt on another member: %w", o.AttemptTimeout, o.Timeout, sequence.ErrInvalidArgument)
	}
	return &Store{cli: cli, prefix: o.Prefix, opts: o}, nil
}

// Prefix returns the prefix of the Store's keys.
func (s *Store) Prefix() string { return s.prefix }

// reserved are the first parts of the Store's own keys, which no part of a
// prefix may be.
var reserved = map[string]bool{"n": true, "r": true, "cat": true, "w": true, "x": true, "id": true, "clock": true, "j": true, "jh": true, "i": true, "": true, ".": true, "..": true}

// checkPrefix refuses a prefix that could nest in another Store's keys.
func checkPrefix(p string) error {
	if !strings.HasSuffix(p, "/") {
		return fmt.Errorf("etcdseq: prefix %q: want one that ends with /, such as sn/: %w", p, sequence.ErrInvalidArgument)
	}
	for part := range strings.SplitSeq(strings.TrimSuffix(p, "/"), "/") {
		if reserved[part] {
			return fmt.Errorf("etcdseq: prefix %q: a part %q is empty, relative or a name the Store's own keys use (n, r, cat, w, x, id, clock, j, jh, i), "+
				"so that it could share keys with the Store of a shorter prefix: %w", p, part, sequence.ErrInvalidArgument)
		}
	}
	return nil
}

// counter returns the etcd key of key's counter.
func (s *Store) counter(key string) string { return s.prefix + "n/" + key }

// mark is a counter's value: its high-water mark and its highest floor.
type mark struct {
	high, floor int64
	rev         int64 // the key's mod revision when read; 0 if absent
}

func (m mark) String() string {
	if m.floor == 0 {
		return strconv.FormatInt(m.high, 10)
	}
	return strconv.FormatInt(m.high, 10) + " " + strconv.FormatInt(m.floor, 10)
}

// parseMark reads a counter's value.
func parseMark(key string, v []byte, rev int64) (mark, error) {
	hs, fs, hasFloor := strings.Cut(string(v), " ")
	m := mark{rev: rev}
	var err1, err2 error
	m.high, err1 = strconv.ParseInt(hs, 10, 64)
	if hasFloor {
		m.floor, err2 = strconv.ParseInt(fs, 10, 64)
	}
	if err1 != nil || err2 != nil || m.high < 0 || m.floor < 0 || m.floor > m.high {
		return mark{}, fmt.Errorf("etcdseq: counter %q holds %.40q, not a mark: %w", key, v, ErrCorrupt)
	}
	return m, nil
}

// ErrCorrupt means a key the Store reads holds a value it did not write.
var ErrCorrupt = errors.New("etcdseq: corrupt ledger")

// checkKey refuses a key the Store does not take.
func checkKey(op, key string) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("etcdseq: %s: a key of %d bytes, more than %d: %w", op, len(key), MaxKeyLen, sequence.ErrInvalidArgument)
	}
	return nil
}

// update reads key's counter, asks change for its new mark, and writes it
// if the counter has not changed since it was read, in one transaction;
// it reads again and retries when another process changed it first. change
// returns ok false to write nothing; update then returns the mark read.
//
// A transaction whose answer was lost (the attempt's deadline, a member
// that died) may have been applied, and the client sends it again on its
// own. Allocate, Floor and Mark only raise the counter, so trying again
// reads the raised mark and at worst leaves a gap. (Return lowers it, and
// does not use update.)
func (s *Store) update(ctx context.Context, op, key string, change func(m mark) (next mark, ok bool, err error)) (m mark, err error) {
	k := s.counter(key)
	err = s.retry(ctx, op, key, func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, k)
		if err != nil {
			return false, err
		}
		m = mark{}
		if len(r.Kvs) > 0 {
			if m, err = parseMark(key, r.Kvs[0].Value, r.Kvs[0].ModRevision); err != nil {
				return false, err
			}
		}
		next, ok, err := change(m)
		if err != nil || !ok {
			return false, err
		}
		// ModRevision 0 is a key that does not exist.
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", m.rev)).
			Then(clientv3.OpPut(k, next.String())).
			Commit()
		if err != nil {
			return false, err
		}
		if !t.Succeeded {
			return true, nil // another process came first: read again
		}
		next.rev = t.Header.Revision
		m = next
		return false, nil
	})
	return m, err
}

// Allocate reserves the n numbers after key's high-water mark and raises
// the mark past them, in one transaction that etcd commits on a majority
// of members. The first range of a new key starts at 1. n < 1 gives an
// error wrapping [sequence.ErrInvalidArgument]; a range that would go past
// math.MaxInt64 an error wrapping [sequence.ErrExhausted], and reserves
// nothing.
func (s *Store) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if n < 1 {
		return sequence.Range{}, fmt.Errorf("etcdseq: Allocate(%q, %d): %w", key, n, sequence.ErrInvalidArgument)
	}
	if err := checkKey("Allocate", key); err != nil {
		return sequence.Range{}, err
	}
	var first int64
	_, err := s.journaled(ctx, "Allocate", key, func(m mark, _ journal.Head) (mark, []journal.Event, error) {
		if m.high > math.MaxInt64-n {
			return m, nil, fmt.Errorf("etcdseq: Allocate(%q, %d) past %d: %w", key, n, m.high, sequence.ErrExhausted)
		}
		first = m.high + 1
		m.high += n
		return m, []journal.Event{{Kind: journal.AllocateKind(ctx), Range: sequence.Range{First: first, Last: m.high}}}, nil
	})
	if err != nil {
		return sequence.Range{}, err
	}
	return sequence.Range{First: first, Last: first + n - 1}, nil
}

// Floor raises key's high-water mark to floor, so that every later number
// is greater; a floor at or below the mark changes nothing but is
// remembered, so that [Store.Return] takes back nothing at or below it.
// floor must be between 0 and math.MaxInt64.
func (s *Store) Floor(ctx context.Context, key string, floor int64) error {
	if floor < 0 {
		return fmt.Errorf("etcdseq: Floor(%q, %d): %w", key, floor, sequence.ErrInvalidArgument)
	}
	if err := checkKey("Floor", key); err != nil {
		return err
	}
	_, err := s.journaled(ctx, "Floor", key, func(m mark, _ journal.Head) (mark, []journal.Event, error) {
		if m.floor >= floor && m.high >= floor {
			return m, nil, nil
		}
		var es []journal.Event
		if floor > m.high {
			es = []journal.Event{{Kind: journal.Floored, Range: sequence.Range{First: m.high + 1, Last: floor}}}
		}
		m.floor = max(m.floor, floor)
		m.high = max(m.high, floor)
		return m, es, nil
	})
	return err
}

// Return lowers key's high-water mark from r.Last to r.First-1 when r.Last
// is the mark still and no floor was raised to r.First or above: a
// [sequence.Returner]. It reports whether it did. It sends one
// transaction and reads nothing after it: one whose answer was lost may
// have been applied, and Return then reports false, or an error wrapping
// [sequence.ErrUnavailable]; the caller issues nothing from the range
// either way.
func (s *Store) Return(ctx context.Context, key string, r sequence.Range) (bool, error) {
	if r.First < 1 || r.Last < r.First {
		return false, fmt.Errorf("etcdseq: Return(%q, %v): %w", key, r, sequence.ErrInvalidArgument)
	}
	if err := checkKey("Return", key); err != nil {
		return false, err
	}
	// One transaction, never tried again, and nothing read after it: the
	// client itself sends a transaction again when its answer is late, and
	// a Return that read the counter again after its first was applied,
	// and another process reserved the range, would take that process's
	// numbers back. A Return that failed is a gap.
	tctx, cancel := context.WithTimeout(ctx, s.opts.AttemptTimeout)
	defer cancel()
	done := false
	_, raced, err := s.journalOnce(tctx, journal.ByOf(ctx), key, func(m mark, _ journal.Head) (mark, []journal.Event, error) {
		if m.high != r.Last || m.floor >= r.First {
			return m, nil, nil
		}
		done = true
		m.high = r.First - 1
		return m, []journal.Event{{Kind: journal.Returned, Range: r}}, nil
	})
	if err != nil {
		return false, s.wrap("Return", key, fmt.Errorf("%w: the transaction's answer was lost, and it may have been applied; it is not tried again: %w", sequence.ErrUnavailable, err))
	}
	return done && !raced, nil
}

// Last returns key's high-water mark: the largest number reserved for it,
// or 0.
func (s *Store) Last(ctx context.Context, key string) (int64, error) {
	m, err := s.read(ctx, "Last", key)
	return m.high, err
}

// read reads key's counter; the zero mark if there is none.
func (s *Store) read(ctx context.Context, op, key string) (m mark, err error) {
	err = s.retry(ctx, op, key, func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, s.counter(key))
		if err != nil {
			return false, err
		}
		m = mark{}
		if len(r.Kvs) > 0 {
			m, err = parseMark(key, r.Kvs[0].Value, r.Kvs[0].ModRevision)
		}
		return false, err
	})
	return m, err
}

// Ping asks the cluster whether it can serve: a linearizable read, which
// needs a leader and a majority. It returns nil or an error wrapping
// [sequence.ErrUnavailable].
func (s *Store) Ping(ctx context.Context) error {
	return s.retry(ctx, "Ping", "", func(ctx context.Context) (bool, error) {
		_, err := s.cli.Get(ctx, s.prefix+"id")
		return false, err
	})
}

// StoreID returns the cluster's identity under the Store's prefix, a random
// value written at the first call of any process.
func (s *Store) StoreID(ctx context.Context) (string, error) {
	var b [16]byte
	rand.Read(b[:])
	return s.putOnce(ctx, "StoreID", "", s.prefix+"id", hex.EncodeToString(b[:]))
}

// putOnce writes value at k unless k exists, and returns what k holds;
// name is what errors call it.
func (s *Store) putOnce(ctx context.Context, op, name, k, value string) (string, error) {
	var got string
	err := s.retry(ctx, op, name, func(ctx context.Context) (bool, error) {
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, value)).
			Else(clientv3.OpGet(k)).
			Commit()
		if err != nil {
			return false, err
		}
		if t.Succeeded {
			got = value
			return false, nil
		}
		kvs := t.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return true, nil // deleted in between
		}
		got = string(kvs[0].Value)
		return false, nil
	})
	return got, err
}
