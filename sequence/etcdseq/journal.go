package etcdseq

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
)

// The journal (see [sequence.Journal]): each record under
// prefix+"j/"+len(key)+"/"+key+"/"+its Seq in 20 digits, JSON; the head
// of a key's journal under prefix+"jh/"+key, "seq hash mark". A write
// that changes a counter and has a record compares the counter's and the
// head's revisions and writes the counter, the records and the head in
// one transaction.

func (s *Store) journalPrefix(key string) string {
	return s.prefix + "j/" + strconv.Itoa(len(key)) + "/" + key + "/"
}

func (s *Store) journalKey(key string, seq int64) string {
	return fmt.Sprintf("%s%020d", s.journalPrefix(key), seq)
}

func (s *Store) headKey(key string) string { return s.prefix + "jh/" + key }

func encodeHead(h sequence.Head) string {
	return fmt.Sprintf("%d %s %d", h.Seq, hex.EncodeToString(h.Hash[:]), h.Mark)
}

func parseHead(key string, v []byte) (sequence.Head, error) {
	f := strings.Fields(string(v))
	var h sequence.Head
	var err1, err2, err3 error
	if len(f) == 3 {
		h.Seq, err1 = strconv.ParseInt(f[0], 10, 64)
		var b []byte
		b, err2 = hex.DecodeString(f[1])
		if len(b) != 32 {
			err2 = fmt.Errorf("a hash of %d bytes", len(b))
		}
		copy(h.Hash[:], b)
		h.Mark, err3 = strconv.ParseInt(f[2], 10, 64)
	}
	if len(f) != 3 || err1 != nil || err2 != nil || err3 != nil {
		return sequence.Head{}, fmt.Errorf("etcdseq: the journal head of %q holds %.60q: %w", key, v, ErrCorrupt)
	}
	return h, nil
}

// journaled reads key's counter and journal head, asks change for the
// counter's new mark and the records to append, and writes them if
// neither changed since, in one transaction; it reads again and retries
// when another process changed them first.
func (s *Store) journaled(ctx context.Context, op, key string, change func(m mark, head sequence.Head) (next mark, es []sequence.Event, err error)) (out []sequence.Event, err error) {
	by := sequence.ByOf(ctx)
	err = s.retry(ctx, op, key, func(ctx context.Context) (again bool, err error) {
		out, again, err = s.journalOnce(ctx, by, key, change)
		return again, err
	})
	return out, err
}

// journalOnce is one attempt of journaled: again is true when another
// process changed the counter or the head between the read and the write.
func (s *Store) journalOnce(ctx context.Context, by, key string, change func(m mark, head sequence.Head) (next mark, es []sequence.Event, err error)) (out []sequence.Event, again bool, err error) {
	k, hk := s.counter(key), s.headKey(key)
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
		var head sequence.Head
		var hrev int64
		if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
			if head, err = parseHead(key, kvs[0].Value); err != nil {
				return nil, false, err
			}
			hrev = kvs[0].ModRevision
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
		if len(es) > 0 {
			es = append(sequence.Reconcile(head, m.high), es...)
		}
		out = make([]sequence.Event, len(es))
		for i, e := range es {
			e.By = by
			out[i], head = sequence.Chain(head, key, e)
			e = out[i]
			ops = append(ops, clientv3.OpPut(s.journalKey(key, e.Seq), string(sequence.MarshalEvent(e))))
		}
		if len(es) > 0 {
			head.Mark = next.high
			ops = append(ops, clientv3.OpPut(hk, encodeHead(head)))
		}
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", m.rev), clientv3.Compare(clientv3.ModRevision(hk), "=", hrev)).
			Then(ops...).
			Commit()
		if err != nil {
			return nil, false, err
		}
		if !t.Succeeded {
			return nil, true, nil // another process came first: read again
		}
		return out, false, nil
	}
}

// Note appends e to key's journal: a [sequence.Journal].
func (s *Store) Note(ctx context.Context, key string, e sequence.Event) (sequence.Event, error) {
	if err := checkKey("Note", key); err != nil {
		return sequence.Event{}, err
	}
	out, err := s.journaled(ctx, "Note", key, func(m mark, head sequence.Head) (mark, []sequence.Event, error) {
		if err := sequence.CheckNote(key, e, max(m.high, head.Mark)); err != nil {
			return m, nil, err
		}
		if e.Kind == sequence.Voided && m.floor < min(e.Range.Last, m.high) {
			// A void holds: no Return gives the number back.
			m.floor = min(e.Range.Last, m.high)
		}
		return m, []sequence.Event{e}, nil
	})
	if err != nil {
		return sequence.Event{}, err
	}
	return out[len(out)-1], nil
}

// Events returns up to limit records of key's journal after the record
// after: a [sequence.Journal].
func (s *Store) Events(ctx context.Context, key string, after int64, limit int) ([]sequence.Event, error) {
	if err := checkKey("Events", key); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	var out []sequence.Event
	p := s.journalPrefix(key)
	err := s.retry(ctx, "Events", key, func(ctx context.Context) (bool, error) {
		out = out[:0]
		r, err := s.cli.Get(ctx, s.journalKey(key, after+1), clientv3.WithRange(clientv3.GetPrefixRangeEnd(p)), clientv3.WithLimit(int64(limit)))
		if err != nil {
			return false, err
		}
		for _, kv := range r.Kvs {
			seq, err := strconv.ParseInt(strings.TrimPrefix(string(kv.Key), p), 10, 64)
			var e sequence.Event
			if err == nil {
				e, err = sequence.UnmarshalEvent(seq, kv.Value)
			}
			if err != nil {
				return false, fmt.Errorf("etcdseq: the journal of %q holds %.80q: %v: %w", key, kv.Key, err, ErrCorrupt)
			}
			out = append(out, e)
		}
		return false, nil
	})
	return out, err
}

// Head returns where key's journal ends: a [sequence.Journal].
func (s *Store) Head(ctx context.Context, key string) (sequence.Head, error) {
	if err := checkKey("Head", key); err != nil {
		return sequence.Head{}, err
	}
	var h sequence.Head
	err := s.retry(ctx, "Head", key, func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, s.headKey(key))
		if err != nil {
			return false, err
		}
		h = sequence.Head{}
		if len(r.Kvs) > 0 {
			h, err = parseHead(key, r.Kvs[0].Value)
		}
		return false, err
	})
	return h, err
}

// Prune replaces the records of key's journal through record p.Seq with
// p, the signed Pruned record that sums them up (a [sequence.Pruner]), in
// one transaction that the head and that record did not move under.
func (s *Store) Prune(ctx context.Context, key string, p sequence.Event) (sequence.Event, error) {
	if err := checkKey("Prune", key); err != nil {
		return sequence.Event{}, err
	}
	hk := s.headKey(key)
	err := s.retry(ctx, "Prune", key, func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, hk)
		if err != nil {
			return false, err
		}
		var head sequence.Head
		var hrev int64
		if len(r.Kvs) > 0 {
			if head, err = parseHead(key, r.Kvs[0].Value); err != nil {
				return false, err
			}
			hrev = r.Kvs[0].ModRevision
		}
		var at sequence.Event
		var arev int64
		if p.Seq >= 1 {
			rk := s.journalKey(key, p.Seq)
			r, err := s.cli.Get(ctx, rk)
			if err != nil {
				return false, err
			}
			if len(r.Kvs) > 0 {
				if at, err = sequence.UnmarshalEvent(p.Seq, r.Kvs[0].Value); err != nil {
					return false, fmt.Errorf("etcdseq: journal record %q: %v: %w", rk, err, ErrCorrupt)
				}
				arev = r.Kvs[0].ModRevision
			}
		}
		if err := sequence.CheckPrune(key, p, at, head); err != nil {
			return false, err
		}
		v := sequence.MarshalEvent(p)
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(hk), "=", hrev), clientv3.Compare(clientv3.ModRevision(s.journalKey(key, p.Seq)), "=", arev)).
			Then(clientv3.OpDelete(s.journalKey(key, 0), clientv3.WithRange(s.journalKey(key, p.Seq))),
				clientv3.OpPut(s.journalKey(key, p.Seq), string(v))).
			Commit()
		if err != nil {
			return false, err
		}
		return !t.Succeeded, nil
	})
	return p, err
}
