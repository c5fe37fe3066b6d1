package etcdseq

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence/record"
)

// The records (see package record) are the keys under the Store's prefix:
// record k is etcd key prefix+k, and its version the key's ModRevision,
// which etcd never gives twice. The layout the Store's other keys have
// had since the first release is the records' (the catalog under "cat/"),
// so a cluster written by an earlier release needs no migration.

// Records returns the cluster's records under the Store's prefix: a
// [record.Store] whose commits are transactions guarded by ModRevision
// compares, committed on a majority of members, and whose clock is the
// shared one of the package doc. etcd bounds a transaction: a commit of more
// than its --max-txn-ops (128 by default) conditions or operations, or
// over its --max-request-bytes (1.5 MiB), is refused; what sn writes in
// one commit stays far below both.
func (s *Store) Records() record.Store { return records{s} }

type records struct{ s *Store }

func (r records) key(k string) string { return r.s.prefix + k }

// own are the Store's own keys under its prefix, which the records share:
// a counter, a deadline, the identity, the clock. A commit may not write
// them: a put of "n/orders" through the records would move a counter
// back. (The journals are records, written by package journal; so are
// the worker leases of an earlier release, w/, which the Leaser leases
// beside.)
var own = []string{"n/", "x/", "id", "clock"}

// checkOwn refuses an op that writes one of the Store's own keys, or a
// range delete that reaches one.
func checkOwn(ops []record.Op) error {
	for _, o := range ops {
		for _, p := range own {
			end := record.PrefixEnd(p)
			if !strings.HasSuffix(p, "/") {
				end = p + "\x00" // the exact key alone
			}
			hit := o.Key >= p && o.Key < end
			if o.End != "" {
				hit = o.Key < end && o.End > p
			}
			if hit {
				return fmt.Errorf("etcdseq: records: a write of %.64q reaches the Store's own keys under %q (counters, deadlines, the identity, the clock): %w", o.Key, p, record.ErrInvalid)
			}
		}
	}
	return nil
}

// maxOps is how many operations one Txn carries: etcd refuses more than
// its --max-txn-ops, 128 by default.
const maxOps = 100

func (r records) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	for _, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
	}
	out := make([]record.Record, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err := r.s.retry(ctx, "read records", "", func(ctx context.Context) (bool, error) {
		// Many keys are read in several Txns, all at the revision of the
		// first: one moment.
		var rev int64
		for at := 0; at < len(keys); at += maxOps {
			chunk := keys[at:min(at+maxOps, len(keys))]
			ops := make([]clientv3.Op, len(chunk))
			for i, k := range chunk {
				if rev == 0 {
					ops[i] = clientv3.OpGet(r.key(k))
				} else {
					ops[i] = clientv3.OpGet(r.key(k), clientv3.WithRev(rev))
				}
			}
			t, err := r.s.cli.Txn(ctx).Then(ops...).Commit()
			if err != nil {
				return false, err
			}
			if rev == 0 {
				rev = t.Header.Revision
			}
			for i, k := range chunk {
				rec := record.Record{Key: k}
				if kvs := t.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
					rec.Value, rec.Version = kvs[0].Value, kvs[0].ModRevision
					if rec.Value == nil {
						rec.Value = []byte{}
					}
				}
				out[at+i] = rec
			}
		}
		return false, nil
	})
	return out, err
}

func (r records) Scan(ctx context.Context, from, to string, limit int) ([]record.Record, error) {
	end := r.key(to)
	if to == "" {
		end = clientv3.GetPrefixRangeEnd(r.s.prefix)
	}
	var out []record.Record
	err := r.s.retry(ctx, "scan records", "", func(ctx context.Context) (bool, error) {
		g, err := r.s.cli.Get(ctx, r.key(from), clientv3.WithRange(end), clientv3.WithLimit(int64(max(limit, 0))))
		if err != nil {
			return false, err
		}
		out = out[:0]
		n := len(r.s.prefix)
		for _, kv := range g.Kvs {
			v := kv.Value
			if v == nil {
				v = []byte{}
			}
			out = append(out, record.Record{Key: string(kv.Key[n:]), Value: v, Version: kv.ModRevision})
		}
		return false, nil
	})
	return out, err
}

func (r records) Commit(ctx context.Context, cond []record.Record, ops []record.Op) (bool, error) {
	if err := record.Check(cond, ops); err != nil {
		return false, err
	}
	if err := checkOwn(ops); err != nil {
		return false, err
	}
	cmps := make([]clientv3.Cmp, len(cond))
	for i, c := range cond {
		cmps[i] = clientv3.Compare(clientv3.ModRevision(r.key(c.Key)), "=", c.Version)
	}
	eops := make([]clientv3.Op, len(ops))
	for i, o := range ops {
		switch {
		case o.Value != nil:
			eops[i] = clientv3.OpPut(r.key(o.Key), string(o.Value))
		case o.End != "":
			eops[i] = clientv3.OpDelete(r.key(o.Key), clientv3.WithRange(r.key(o.End)))
		default:
			eops[i] = clientv3.OpDelete(r.key(o.Key))
		}
	}
	// Tried again when etcd did not answer: a commit applied the first
	// time fails its conditions the second, and reports false; the caller
	// reads again.
	ok := false
	err := r.s.retry(ctx, "write records", "", func(ctx context.Context) (bool, error) {
		t, err := r.s.cli.Txn(ctx).If(cmps...).Then(eops...).Commit()
		if err != nil {
			return false, err
		}
		ok = t.Succeeded
		return false, nil
	})
	return ok && err == nil, err
}

func (r records) Now(ctx context.Context) (time.Time, error) { return r.s.now(ctx) }
