package etcdseq

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/sequence"
)

// catalogKeys returns the prefix of the catalog's entries and the key of
// its version, which every enrollment and Forget rewrites, so that an
// enrollment proven against the entries of an older version is proven
// again.
func (s *Store) catalogKeys() (entries, version string) {
	return s.prefix + "cat/e/", s.prefix + "cat/v"
}

// Enroll records e in the Store's catalog unless an entry with its ID is
// there, after check accepts every entry recorded: a [sequence.Catalog].
// The entries and the catalog's version are read at one revision, and e is
// written only if the version has not moved since, so that of processes on
// many machines enrolling at once each proves against the entries of all
// that came before it. etcd has no clock a client can read: an entry's
// First is the enrolling process's time.
func (s *Store) Enroll(ctx context.Context, e sequence.Entry, check func([]sequence.Entry) error) (sequence.Entry, error) {
	if err := sequence.CheckEntry(e); err != nil {
		return sequence.Entry{}, err
	}
	prefix, vkey := s.catalogKeys()
	ekey := prefix + e.ID
	var got sequence.Entry
	added := false
	err := s.retry(ctx, "Enroll", e.ID, func(ctx context.Context) (bool, error) {
		vrev, es, found, err := s.readCatalog(ctx, e.ID)
		if err != nil || found != nil {
			if found != nil {
				got = *found
			}
			return false, err
		}
		if err := check(es); err != nil {
			return false, err
		}
		e.First = time.Now().UTC()
		v, err := json.Marshal(e)
		if err != nil {
			return false, err
		}
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(vkey), "=", vrev),
				clientv3.Compare(clientv3.CreateRevision(ekey), "=", 0)).
			Then(clientv3.OpPut(ekey, string(v)), clientv3.OpPut(vkey, e.ID)).
			Commit()
		if err != nil {
			return false, err
		}
		if !t.Succeeded {
			return true, nil // another enrollment came first: prove again
		}
		got, added = e, true
		return false, nil
	})
	if err != nil {
		return sequence.Entry{}, err
	}
	if added {
		sequence.NoteCatalog(ctx, s, sequence.Enrolled, got)
	}
	return got, nil
}

// readCatalog reads the catalog's version and entries at one revision, and
// the entry with id among them.
func (s *Store) readCatalog(ctx context.Context, id string) (vrev int64, es []sequence.Entry, found *sequence.Entry, err error) {
	prefix, vkey := s.catalogKeys()
	t, err := s.cli.Txn(ctx).Then(clientv3.OpGet(vkey), clientv3.OpGet(prefix, clientv3.WithPrefix())).Commit()
	if err != nil {
		return 0, nil, nil, err
	}
	if kvs := t.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		vrev = kvs[0].ModRevision
	}
	for _, kv := range t.Responses[1].GetResponseRange().Kvs {
		var e sequence.Entry
		kid := string(kv.Key[len(prefix):])
		if err := json.Unmarshal(kv.Value, &e); err != nil || e.ID != kid {
			return 0, nil, nil, fmt.Errorf("etcdseq: catalog entry %q holds %.80q: %w", kid, kv.Value, ErrCorrupt)
		}
		es = append(es, e)
	}
	sequence.SortEntries(es)
	for i := range es {
		if es[i].ID == id {
			found = &es[i]
		}
	}
	return vrev, es, found, nil
}

// Entries returns the Store's catalog, oldest first: a [sequence.Catalog].
func (s *Store) Entries(ctx context.Context) ([]sequence.Entry, error) {
	var es []sequence.Entry
	err := s.retry(ctx, "Entries", "", func(ctx context.Context) (bool, error) {
		var err error
		_, es, _, err = s.readCatalog(ctx, "")
		return false, err
	})
	return es, err
}

// Forget removes the entry with id from the Store's catalog: a
// [sequence.Catalog]. It deletes the entry only as it read it, and
// reports true also when an earlier attempt, whose answer was lost, did.
func (s *Store) Forget(ctx context.Context, id string) (bool, error) {
	prefix, vkey := s.catalogKeys()
	ekey := prefix + id
	var gone, seen bool
	err := s.retry(ctx, "Forget", id, func(ctx context.Context) (bool, error) {
		r, err := s.cli.Get(ctx, ekey)
		if err != nil {
			return false, err
		}
		if len(r.Kvs) == 0 {
			gone = seen // an earlier attempt deleted it, or there was none
			return false, nil
		}
		seen = true
		t, err := s.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(ekey), "=", r.Kvs[0].ModRevision)).
			Then(clientv3.OpDelete(ekey), clientv3.OpPut(vkey, "-"+id)).
			Commit()
		if err != nil {
			return false, err
		}
		if !t.Succeeded {
			return true, nil
		}
		gone = true
		return false, nil
	})
	if err == nil && gone {
		sequence.NoteCatalog(ctx, s, sequence.Forgotten, sequence.Entry{ID: id})
	}
	return gone, err
}
