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

// The journal (see [journal.Keeper]) is kept in the store's records by
// package journal: the store's keys under its prefix are its records. A
// write that changes a counter and has a record compares the counter's
// and the head's revisions and writes the counter, the records and the
// head in one transaction.

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

// Note appends e to key's journal: a [journal.Keeper].
func (s *Store) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	if err := checkKey("Note", key); err != nil {
		return journal.Event{}, err
	}
	out, err := s.journaled(ctx, "Note", key, func(m mark, head journal.Head) (mark, []journal.Event, error) {
		if err := journal.CheckNote(key, e, max(m.high, head.Mark)); err != nil {
			return m, nil, err
		}
		if e.Kind == journal.Voided && m.floor < min(e.Range.Last, m.high) {
			// A void holds: no Return gives the number back.
			m.floor = min(e.Range.Last, m.high)
		}
		return m, []journal.Event{e}, nil
	})
	if err != nil {
		return journal.Event{}, err
	}
	return out[len(out)-1], nil
}

// Events returns up to limit records of key's journal after the record
// after: a [journal.Keeper].
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	if err := checkKey("Events", key); err != nil {
		return nil, err
	}
	return journal.Events(ctx, s.Records(), key, after, limit)
}

// Head returns where key's journal ends: a [journal.Keeper].
func (s *Store) Head(ctx context.Context, key string) (journal.Head, error) {
	if err := checkKey("Head", key); err != nil {
		return journal.Head{}, err
	}
	return journal.ReadHead(ctx, s.Records(), key)
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [journal.Keeper]), in
// one transaction that the head and that record did not move under.
func (s *Store) Prune(ctx context.Context, key string, p journal.Event) (journal.Event, error) {
	if err := checkKey("Prune", key); err != nil {
		return journal.Event{}, err
	}
	return journal.Prune(ctx, s.Records(), key, p)
}
