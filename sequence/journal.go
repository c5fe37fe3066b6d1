package sequence

import (
	"context"
	"sync"

	"github.com/sngen/sn/sequence/journal"
)

// Continuous is implemented by a [Gen] that issues every number of a
// key, in order, without a gap: one at a time, each in the caller's
// transaction or held and then committed or voided, never from a block
// (sqlseq's Gapless). Continuous reports whether it does. sn's legal
// profiles that demand an unbroken series accept only such a Gen.
type Continuous interface {
	Continuous() bool
}

// journals keeps the journals of a store in memory, for MemoryAllocator.
type journals struct {
	mu sync.Mutex
	m  map[string]*memJournal
}

type memJournal struct {
	events []journal.Event
	head   journal.Head
}

// append chains e after key's last record, for a change of the key's
// mark from before to mark. The caller holds whatever lock orders the
// key's writes.
func (j *journals) append(key string, e journal.Event, before, mark int64) journal.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string]*memJournal{}
	}
	mj := j.m[key]
	if mj == nil {
		mj = &memJournal{}
		j.m[key] = mj
	}
	for _, r := range journal.Reconcile(mj.head, before) {
		r.By = e.By
		r, mj.head = journal.Chain(mj.head, key, r)
		mj.head.Mark = before
		mj.events = append(mj.events, r)
	}
	e, mj.head = journal.Chain(mj.head, key, e)
	mj.head.Mark = mark
	mj.events = append(mj.events, e)
	return e
}

func (j *journals) events(ctx context.Context, key string, after int64, limit int) ([]journal.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	mj := j.m[key]
	if mj == nil {
		return nil, nil
	}
	var out []journal.Event
	for _, e := range mj.events {
		if e.Seq > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (j *journals) headOf(ctx context.Context, key string) (journal.Head, error) {
	if err := ctx.Err(); err != nil {
		return journal.Head{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if mj := j.m[key]; mj != nil {
		return mj.head, nil
	}
	return journal.Head{}, nil
}
