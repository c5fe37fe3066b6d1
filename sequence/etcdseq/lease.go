package etcdseq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// Leaser leases snowflake worker ids from the cluster: a
// [snowflake.Leaser], the counterpart of sqlseq's and redisseq's for
// deployments whose shared store is etcd.
//
// It is the [snowflake.RecordLeaser] over the Store's records
// ([Store.Records]): each id of a name is a record holding a random
// token, the holder's; a deadline by the Store's shared clock
// ([Store.Now]), never a client's; and the bound, the last instant its
// holders may have issued at. Taking, renewing and releasing an id are
// each one transaction guarded by the id's ModRevision, committed on a
// majority of members.
//
// An earlier release kept each id in keys of its own, w/NAME/ID/holder
// under an etcd lease and w/NAME/ID/bound. The first Lease of a Store
// moves them into the records (see [Leaser.Lease]). A Leaser is safe for
// concurrent use.
type Leaser struct {
	s *Store
	l *snowflake.RecordLeaser
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
	l, err := snowflake.NewRecordLeaser(s.Records(), o.Name)
	if err != nil {
		return nil, err
	}
	return &Leaser{s: s, l: l}, nil
}

// Prefix returns the prefix of the keys of the Leaser's Store.
func (l *Leaser) Prefix() string { return l.s.prefix }

// Lease takes a free worker id below layout.Workers() for ttl (see
// [snowflake.RecordLeaser.Lease]): one a holder released if there is
// one, else the first free one from a random id on. It returns an error
// wrapping [snowflake.ErrLayout] for a name leased in another layout,
// [sequence.ErrUnavailable] when every id is held (or the cluster cannot
// serve), and [sequence.ErrInvalidArgument] for a ttl under 1ms.
//
// The first Lease of a Store moves the leases of an earlier release, if
// the record "m/workers" does not say it is done: it moves the layouts
// of their names ([snowflake.MoveLayouts]), so that a process of that
// release leases no more; adopts each id in the records, a live one held
// for its etcd lease's whole ttl and a second, with its bound; and then
// deletes the holder key, so that the holder's next renewal fails and it
// stops issuing. It does so twice, half a second apart, if it found any:
// a Lease of that release that read the layout before it moved may take
// an id in between.
func (l *Leaser) Lease(ctx context.Context, layout snowflake.Layout, ttl time.Duration) (snowflake.Lease, error) {
	if err := l.s.moveWorkers(ctx); err != nil {
		return nil, err
	}
	return l.l.Lease(ctx, layout, ttl)
}

// Records returns the records of the Leaser's cluster (see
// [Store.Records]): the leases, the catalog of its series and the claims
// of idempotency keys for the ids of a snowflake Gen that leases its
// worker there.
func (l *Leaser) Records() record.Store { return l.s.Records() }

var _ snowflake.Leaser = (*Leaser)(nil)

// workersMoved is the record that says the leases of an earlier release
// are in the records.
const workersMoved = "m/workers"

// moved remembers, per Store, that the leases of an earlier release are
// in the records.
type moved struct {
	sync.Mutex
	done bool
}

// moveWorkers moves the leases of an earlier release into the records,
// unless done (see Leaser.Lease).
func (s *Store) moveWorkers(ctx context.Context) error {
	s.workers.Lock()
	defer s.workers.Unlock()
	if s.workers.done {
		return nil
	}
	recs := s.Records()
	rs, err := recs.Get(ctx, workersMoved)
	if err != nil {
		return err
	}
	if !rs[0].Exists() {
		if err := snowflake.MoveLayouts(ctx, recs); err != nil {
			return err
		}
		for pass := 0; pass < 2; pass++ {
			found, err := s.adoptWorkers(ctx)
			if err != nil {
				return err
			}
			if !found || pass == 1 {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
		}
		if _, err := recs.Commit(ctx, nil, []record.Op{record.Put(workersMoved, []byte("moved "+time.Now().UTC().Format(time.RFC3339)))}); err != nil {
			return err
		}
	}
	s.workers.done = true
	return nil
}

// adoptWorkers adopts in the records each id that the keys of an earlier
// release hold, and deletes their holder keys; it reports whether it
// found any.
func (s *Store) adoptWorkers(ctx context.Context) (bool, error) {
	base := s.prefix + "w/"
	var got *clientv3.GetResponse
	err := s.retry(ctx, "move the worker leases of an earlier release", "", func(ctx context.Context) (bool, error) {
		var err error
		got, err = s.cli.Get(ctx, base, clientv3.WithPrefix())
		return false, err
	})
	if err != nil {
		return false, err
	}
	type old struct {
		holder     string // the holder's token, "" for none
		lease      clientv3.LeaseID
		bound      int64
		hkey, bkey string
	}
	ids := map[[2]string]*old{}
	for _, kv := range got.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), base)
		i, j := strings.Index(rest, "/"), strings.LastIndex(rest, "/")
		if i < 0 || j <= i {
			continue
		}
		k := [2]string{rest[:i], rest[i+1 : j]}
		o := ids[k]
		if o == nil {
			o = &old{hkey: base + rest[:j] + "/holder", bkey: base + rest[:j] + "/bound"}
			ids[k] = o
		}
		switch rest[j+1:] {
		case "holder":
			o.holder, o.lease = string(kv.Value), clientv3.LeaseID(kv.Lease)
		case "bound":
			if o.bound, err = parseBound(kv.Value); err != nil {
				return false, err
			}
		}
	}
	recs := s.Records()
	for k, o := range ids {
		id, err := strconv.ParseInt(k[1], 10, 64)
		if err != nil || id < 0 {
			continue
		}
		l, err := snowflake.NewRecordLeaser(recs, k[0])
		if err != nil {
			continue
		}
		var deadline time.Time
		if o.holder != "" {
			ttl, err := s.cli.TimeToLive(ctx, o.lease)
			if err != nil {
				return false, fmt.Errorf("etcdseq: move the worker leases of an earlier release: the ttl of %q: %w", o.hkey, err)
			}
			if ttl.TTL > 0 {
				now, err := recs.Now(ctx)
				if err != nil {
					return false, err
				}
				// Its whole ttl and a second: its holder stops issuing
				// half a ttl after its last renewal.
				deadline = now.Add(time.Duration(ttl.GrantedTTL+1) * time.Second)
			}
		}
		adopt := func(bound int64) error {
			var b time.Time
			if bound > 0 {
				b = time.Unix(0, bound)
			}
			return record.Update(ctx, recs, func(tx *record.Tx) error { return l.Adopt(tx, id, deadline, b) })
		}
		if err := adopt(o.bound); err != nil {
			return false, err
		}
		if o.holder == "" {
			continue
		}
		// The holder's renewals compare its token: gone, they fail. A
		// renewal just before raised the bound, read here.
		var t *clientv3.TxnResponse
		err = s.retry(ctx, "move the worker leases of an earlier release", "", func(ctx context.Context) (bool, error) {
			var err error
			t, err = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(o.hkey), "=", o.holder)).
				Then(clientv3.OpDelete(o.hkey), clientv3.OpGet(o.bkey)).Commit()
			return false, err
		})
		if err != nil {
			return false, err
		}
		if t.Succeeded {
			if bk := t.Responses[1].GetResponseRange().Kvs; len(bk) > 0 {
				b, err := parseBound(bk[0].Value)
				if err != nil {
					return false, err
				}
				if b > o.bound {
					if err := adopt(b); err != nil {
						return false, err
					}
				}
			}
		}
	}
	return len(ids) > 0, nil
}

// parseBound reads a bound an earlier release wrote: nanoseconds in 20
// digits.
func parseBound(v []byte) (int64, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("etcdseq: a worker bound holds %.40q: %w", v, ErrCorrupt)
	}
	return n, nil
}
