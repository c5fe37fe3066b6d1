package etcdseq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// A write to a key's counter (Allocate, Floor, Return, a note) is one
// etcd transaction: it compares the counter's and the journal head's
// revisions with those read, and writes the counter with the records
// package journal appends for it. This file is that transaction; package
// journal decides what is written.

// seen is what one read of the store gave, as the records [record.In]
// reads in a transaction the Store commits itself; a record it was not
// given reads as absent, and the commit compares that.
type seen []record.Record

func (v seen) Get(_ context.Context, keys ...string) ([]record.Record, error) {
	out := make([]record.Record, len(keys))
	for i, k := range keys {
		// A record not read with the counter is taken to be absent: the
		// commit compares it so (a journal record about to be written).
		out[i] = record.Record{Key: k}
		if j := slices.IndexFunc(v, func(r record.Record) bool { return r.Key == k }); j >= 0 {
			out[i] = v[j]
		}
	}
	return out, nil
}

func (seen) Scan(context.Context, string, string, int) ([]record.Record, error) {
	return nil, errors.ErrUnsupported
}

func (seen) Commit(context.Context, []record.Record, []record.Op) (bool, error) {
	return false, errors.ErrUnsupported
}

func (seen) Now(context.Context) (time.Time, error) { return time.Now(), nil }

// journaled reads key's counter and journal head, asks change for the
// counter's new mark and the records to append, and writes them if
// neither changed since, in one transaction; it reads again and retries
// when another process changed them first.
func (s *Store) journaled(ctx context.Context, op, key string, change func(m mark, head journal.Head) (next mark, es []journal.Event, err error)) (out []journal.Event, err error) {
	by := journal.ByOf(ctx)
	err = s.retry(ctx, op, key, func(ctx context.Context) (again bool, err error) {
		out, again, err = s.journalOnce(ctx, by, key, change)
		return again, err
	})
	return out, err
}

// journalOnce is one attempt of journaled: again is true when another
// process changed the counter or the head between the read and the write.
func (s *Store) journalOnce(ctx context.Context, by, key string, change func(m mark, head journal.Head) (next mark, es []journal.Event, err error)) (out []journal.Event, again bool, err error) {
	hr := journal.HeadKey(key)
	k, hk := s.counter(key), s.prefix+hr
	{
		r, err := s.cli.Txn(ctx).Then(clientv3.OpGet(k), clientv3.OpGet(hk)).Commit()
		if err != nil {
			return nil, false, err
		}
		var m mark
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			if m, err = parseMark(key, kvs[0].Value, kvs[0].ModRevision); err != nil {
				return nil, false, err
			}
		}
		hrec := record.Record{Key: hr}
		if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
			hrec.Value, hrec.Version = kvs[0].Value, kvs[0].ModRevision
		}
		head, err := journal.DecodeHead(key, hrec.Value)
		if err != nil {
			return nil, false, err
		}
		next, es, err := change(m, head)
		if err != nil {
			return nil, false, err
		}
		if len(es) == 0 && next == m {
			return nil, false, nil
		}
		ops := []clientv3.Op{}
		if next != m {
			ops = append(ops, clientv3.OpPut(k, next.String()))
		}
		cond, jops, err := record.In(journal.WithBy(ctx, by), seen{hrec}, func(tx *record.Tx) (err error) {
			out, err = journal.Append(tx, key, m.high, next.high, es...)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		for _, o := range jops {
			ops = append(ops, clientv3.OpPut(s.prefix+o.Key, string(o.Value)))
		}
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(k), "=", m.rev)}
		for _, c := range cond {
			// The head as read, and each record to write absent.
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.prefix+c.Key), "=", c.Version))
		}
		if len(cond) == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(hk), "=", hrec.Version))
		}
		t, err := s.cli.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(k), clientv3.OpGet(hk)).Commit()
		if err != nil {
			return nil, false, err
		}
		if !t.Succeeded {
			kr, hr := t.Responses[0].GetResponseRange().Kvs, t.Responses[1].GetResponseRange().Kvs
			if rev(kr) == m.rev && rev(hr) == hrec.Version {
				// The counter and the head as read: a record to write
				// is there already, past a head moved back by hand.
				return nil, false, fmt.Errorf("%w: the journal of %q holds a record past its head (record %d): the head was moved back; nothing is appended until the journal is restored (VerifyChain names the records)", journal.ErrCorrupt, key, head.Seq)
			}
			return nil, true, nil // another process came first: read again
		}
		return out, false, nil
	}
}

// rev is the ModRevision of the key kvs holds, 0 for none.
func rev(kvs []*mvccpb.KeyValue) int64 {
	if len(kvs) == 0 {
		return 0
	}
	return kvs[0].ModRevision
}
