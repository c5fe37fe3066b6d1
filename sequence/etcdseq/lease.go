package etcdseq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from the cluster: a
// [snowflake.Leaser], the counterpart of sqlseq's and redisseq's for
// deployments whose shared store is etcd.
//
// Each id of a name has two keys under the Store's prefix: its holder,
// w/NAME/ID/holder, a random token written with an etcd lease, which etcd
// deletes when the lease expires; and its bound, w/NAME/ID/bound, the last
// instant its holders may have issued at, kept for good. Taking an id is
// one transaction: write the holder if there is none, and read the bound.
// Of two processes that try at once, one gets it. Expiry is etcd's: the
// leader counts a lease's time, never a client's clock, and a lease that
// expired is gone, so its holder's renewals fail (sequence.ErrLeaseLost)
// even when no one has taken the id since.
//
// etcd counts a lease in whole seconds: a ttl is rounded up to one. The
// id is then held a little longer than asked, which is safe: a Gen stops
// issuing TTL/2 after its last renewal, long before anyone else can take
// its id.
//
// A renewal keeps the etcd lease alive and raises the bound, only while
// the holder key holds the token; Release sets the bound to the end of the
// holder's last id, never below the bound it found, deletes the holder key
// and revokes the lease. A new holder issues only after the bound, so the
// ids of two holders of one id never meet, and a process that restarts
// after its clock went back does not issue at instants already used. The
// bound is as durable as a range: committed on a majority of members.
// A Leaser is safe for concurrent use.
type Leaser struct {
	s    *Store
	name string
}

// LeaserOptions configure a [Leaser]. The zero value gives the defaults.
type LeaserOptions struct {
	// Name tells apart series of ids that may reuse one another's worker
	// ids (two layouts, two services): at most 255 bytes, without "/".
	// default: "snowflake".
	Name string
}

// NewLeaser returns a Leaser over the Store's cluster. A nil s, or a name
// that is too long or holds "/", is an error wrapping
// [sequence.ErrInvalidArgument].
func NewLeaser(s *Store, o LeaserOptions) (*Leaser, error) {
	if o.Name == "" {
		o.Name = "snowflake"
	}
	if s == nil || len(o.Name) > 255 || strings.Contains(o.Name, "/") {
		return nil, fmt.Errorf("%w: etcdseq.NewLeaser(%v, name %.40q): want a Store and a name of 1 to 255 bytes without /", sequence.ErrInvalidArgument, s != nil, o.Name)
	}
	return &Leaser{s: s, name: o.Name}, nil
}

// Prefix returns the prefix of the keys of the Leaser's Store.
func (l *Leaser) Prefix() string { return l.s.prefix }

// keys returns the holder and bound keys of id.
func (l *Leaser) keys(id int64) (holder, bound string) {
	base := l.s.prefix + "w/" + l.name + "/" + strconv.FormatInt(id, 10) + "/"
	return base + "holder", base + "bound"
}

// formatBound writes a bound in nanoseconds as 20 digits, so that etcd's
// comparison of values, which is of bytes, orders bounds as numbers.
func formatBound(ns int64) string { return fmt.Sprintf("%020d", max(ns, 0)) }

func parseBound(v []byte) (int64, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("etcdseq: a worker bound holds %.40q: %w", v, ErrCorrupt)
	}
	return n, nil
}

// Lease takes a free worker id below layout.Workers() for ttl: one a
// holder released (its bound is known, so a Gen issues with it at once)
// if there is one, else the first free one from a random id on. The first
// Lease of a name records its layout; a Lease with another layout returns
// an error wrapping snowflake.ErrLayout. Lease returns an error wrapping
// [sequence.ErrUnavailable] when every id is held (or the cluster cannot
// serve), and one wrapping [sequence.ErrInvalidArgument] for a ttl under
// 1ms.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if layout.WorkerBits < 0 || layout.WorkerBits > 30 || ttl < time.Millisecond {
		return nil, fmt.Errorf("etcdseq: Lease(%d worker bits, ttl %v): want 0 to 30 worker bits and a ttl of at least 1ms: %w",
			layout.WorkerBits, ttl, sequence.ErrInvalidArgument)
	}
	if got, err := sequence.Remember(ctx, l.s, "snowflake layout "+l.name, layout.String()); err != nil {
		return nil, err
	} else if got != layout.String() {
		return nil, fmt.Errorf("etcdseq: Lease: the worker ids of %q were leased with the layout %q; this Gen's is %q. Ids of two layouts can meet: give this one a name of its own (LeaserOptions.Name): %w",
			l.name, got, layout.String(), snowflake.ErrLayout)
	}
	workers := layout.Workers()
	held := map[int64]bool{}
	var released []int64
	err := l.s.retry(ctx, "Lease", l.name, func(ctx context.Context) (bool, error) {
		r, err := l.s.cli.Get(ctx, l.s.prefix+"w/"+l.name+"/", clientv3.WithPrefix())
		if err != nil {
			return false, err
		}
		clear(held)
		released = released[:0]
		bounded := map[int64]bool{}
		for _, kv := range r.Kvs {
			var id int64
			var kind string
			rest := string(kv.Key[len(l.s.prefix+"w/"+l.name+"/"):])
			if _, err := fmt.Sscanf(rest, "%d/%s", &id, &kind); err != nil || id < 0 || id >= workers {
				continue
			}
			switch kind {
			case "holder":
				held[id] = true
			case "bound":
				bounded[id] = true
			}
		}
		for id := range bounded {
			if !held[id] {
				released = append(released, id)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	var tok [16]byte
	rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	secs := int64((ttl + time.Second - 1) / time.Second)
	var lease clientv3.LeaseID
	err = l.s.retry(ctx, "Lease", l.name, func(ctx context.Context) (bool, error) {
		g, err := l.s.cli.Grant(ctx, secs)
		if err == nil {
			lease = g.ID
		}
		return false, err
	})
	if err != nil {
		return nil, err
	}
	start, _ := rand.Int(rand.Reader, big.NewInt(workers))
	for k := range int64(len(released)) + workers {
		if int64(len(held)) >= workers {
			break
		}
		var id int64
		if k < int64(len(released)) {
			id = released[k]
		} else {
			id = (start.Int64() + k - int64(len(released))) % workers
		}
		if held[id] {
			continue
		}
		holder, bkey := l.keys(id)
		var took bool
		var bound int64
		err := l.s.retry(ctx, "Lease", l.name, func(ctx context.Context) (bool, error) {
			t, err := l.s.cli.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(holder), "=", 0)).
				Then(clientv3.OpPut(holder, token, clientv3.WithLease(lease)), clientv3.OpGet(bkey)).
				Else(clientv3.OpGet(holder)).
				Commit()
			if err != nil {
				return false, err
			}
			if !t.Succeeded {
				// Another holder, or this one: an earlier attempt whose
				// answer was lost may have written the token.
				kvs := t.Responses[0].GetResponseRange().Kvs
				took = len(kvs) > 0 && string(kvs[0].Value) == token
				if took {
					return false, l.readBound(ctx, bkey, &bound)
				}
				return false, nil
			}
			took = true
			if kvs := t.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
				bound, err = parseBound(kvs[0].Value)
			}
			return false, err
		})
		if err != nil {
			l.revoke(lease)
			return nil, err
		}
		if !took {
			held[id] = true // another process took it since the read
			continue
		}
		return &etcdLease{l: l, id: id, token: token, lease: lease, bound: bound, recorded: bound}, nil
	}
	l.revoke(lease)
	return nil, fmt.Errorf("etcdseq: Lease: all %d worker ids of %q are held: %w", workers, l.name, sequence.ErrUnavailable)
}

// readBound reads the bound at key into *b; 0 if there is none.
func (l *Leaser) readBound(ctx context.Context, key string, b *int64) error {
	r, err := l.s.cli.Get(ctx, key)
	if err != nil {
		return err
	}
	*b = 0
	if len(r.Kvs) > 0 {
		*b, err = parseBound(r.Kvs[0].Value)
	}
	return err
}

// revoke gives an etcd lease back, in the background of a failure: if it
// does not arrive, the lease expires on its own.
func (l *Leaser) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.AttemptTimeout)
	defer cancel()
	l.s.cli.Revoke(ctx, id)
}

// etcdLease is one holding of a worker id.
type etcdLease struct {
	mu       sync.Mutex // serialises Renew and Release
	l        *Leaser
	id       int64
	token    string
	lease    clientv3.LeaseID
	bound    int64 // the bound the id had when taken, in nanoseconds; 0 for none
	recorded int64 // the highest bound this holder recorded
}

// Worker returns the id held.
func (r *etcdLease) Worker() int64 { return r.id }

// Bound returns the bound the id's earlier holders recorded, or the zero
// time.
func (r *etcdLease) Bound() time.Time {
	if r.bound == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.bound)
}

// Renew keeps the etcd lease alive for another ttl and raises the recorded
// bound to bound, while the holder key holds this holder's token; once the
// lease has expired or the id is another's, it returns an error wrapping
// sequence.ErrLeaseLost.
func (r *etcdLease) Renew(ctx context.Context, bound time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.l.s
	err := s.retry(ctx, "Renew", r.l.name, func(ctx context.Context) (bool, error) {
		k, err := s.cli.KeepAliveOnce(ctx, r.lease)
		if errors.Is(err, rpctypes.ErrLeaseNotFound) || err == nil && k.TTL <= 0 {
			return false, r.lost("Renew")
		}
		return false, err
	})
	if err != nil {
		return err
	}
	ns := r.recorded
	if !bound.IsZero() {
		ns = max(ns, bound.UnixNano())
	}
	return r.record(ctx, "Renew", ns, false)
}

// Release records bound, never below the bound the id had when leased (a
// zero bound, from a holder that issued nothing, keeps that one), frees
// the id and revokes the etcd lease, while the holder key holds this
// holder's token; otherwise it returns an error wrapping
// sequence.ErrLeaseLost.
func (r *etcdLease) Release(ctx context.Context, bound time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := r.bound
	if !bound.IsZero() {
		ns = max(ns, bound.UnixNano())
	}
	if err := r.record(ctx, "Release", ns, true); err != nil {
		return err
	}
	r.l.revoke(r.lease)
	return nil
}

// record writes the bound ns, and with free deletes the holder key, in one
// transaction that holds only if the holder key holds the token.
func (r *etcdLease) record(ctx context.Context, op string, ns int64, free bool) error {
	s := r.l.s
	holder, bkey := r.l.keys(r.id)
	ops := []clientv3.Op{clientv3.OpPut(bkey, formatBound(ns))}
	if free {
		ops = append(ops, clientv3.OpDelete(holder))
	}
	var held bool
	err := s.retry(ctx, op, r.l.name, func(ctx context.Context) (bool, error) {
		t, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(holder), "=", r.token)).Then(ops...).Commit()
		if err != nil {
			return false, err
		}
		held = t.Succeeded
		return false, nil
	})
	if err != nil {
		return err
	}
	if !held {
		return r.lost(op)
	}
	r.recorded = ns
	return nil
}

func (r *etcdLease) lost(op string) error {
	return fmt.Errorf("etcdseq: %s: worker %d of %q: the lease expired or is another holder's: %w", op, r.id, r.l.name, sequence.ErrLeaseLost)
}

var _ snowflake.Leaser = (*Leaser)(nil)

// Records returns the records of the Leaser's cluster (see
// [Store.Records]): the catalog of its series and the claims of
// idempotency keys for the ids of a snowflake Gen that leases its worker
// there.
func (l *Leaser) Records() record.Store { return l.s.Records() }
