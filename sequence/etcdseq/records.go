package etcdseq

import (
	"context"
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
// shared one of [Store.Now].
func (s *Store) Records() record.Store { return records{s} }

type records struct{ s *Store }

func (r records) key(k string) string { return r.s.prefix + k }

func (r records) Get(ctx context.Context, keys ...string) ([]record.Record, error) {
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		if err := record.CheckKey(k); err != nil {
			return nil, err
		}
		ops[i] = clientv3.OpGet(r.key(k))
	}
	out := make([]record.Record, len(keys))
	err := r.s.retry(ctx, "read records", "", func(ctx context.Context) (bool, error) {
		t, err := r.s.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return false, err
		}
		for i, k := range keys {
			out[i] = record.Record{Key: k}
			if kvs := t.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
				out[i].Value, out[i].Version = kvs[0].Value, kvs[0].ModRevision
				if out[i].Value == nil {
					out[i].Value = []byte{}
				}
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

func (r records) Now(ctx context.Context) (time.Time, error) { return r.s.Now(ctx) }
