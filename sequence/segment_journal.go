package sequence

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/sngen/sn/sequence/journal"
)

// maxNotes bounds the journal records a Segment keeps waiting for its
// store: past it, a release is not journaled, and its numbers stay Open
// in an [journal.Audit] (issued or not, the journal cannot say), never wrong.
const maxNotes = 1 << 16

// segments numbers the Segments of the process, for their names.
var segments atomic.Int64

type keyEvent struct {
	key string
	e   journal.Event
}

// note queues records for key's journal, written in the background by
// one goroutine; Close writes what is left. It does nothing when the
// Allocator keeps no journal.
func (s *Segment) note(key string, es ...journal.Event) {
	j := journal.Of(s.alloc)
	if j == nil || len(es) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes.Lock()
	defer s.notes.Unlock()
	if len(s.notes.q)+len(es) > maxNotes {
		// Dropped, and the key's later Closed records too: its numbers
		// stay open, never reported issued.
		if s.notes.dropped == nil {
			s.notes.dropped = map[string]bool{}
		}
		s.notes.dropped[key] = true
		s.notesLost.Add(int64(len(es)))
		return
	}
	for _, e := range es {
		s.notes.q = append(s.notes.q, keyEvent{key, e})
	}
	if s.notes.running || s.closed.Load() {
		return // Close writes them
	}
	s.notes.running = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			s.notes.Lock()
			q := s.notes.q
			s.notes.q = nil
			if len(q) == 0 {
				s.notes.running = false
				s.notes.Unlock()
				return
			}
			s.notes.Unlock()
			s.writeNotes(journal.WithBy(context.Background(), s.by), j, q)
		}
	}()
}

// writeNotes writes q, each record within FetchTimeout, until parent is
// done. Once a record of a key fails (or was dropped), the key's later
// Closed records are not written: a Closed after a lost Released would
// report the released numbers issued; without it they stay open.
func (s *Segment) writeNotes(parent context.Context, j journal.Keeper, q []keyEvent) {
	for _, ke := range q {
		if parent.Err() != nil {
			return
		}
		s.notes.Lock()
		skip := ke.e.Kind == journal.Closed && s.notes.dropped[ke.key]
		s.notes.Unlock()
		if skip {
			continue
		}
		ctx, cancel := context.WithTimeout(parent, s.opts.FetchTimeout)
		_, err := j.Note(ctx, ke.key, ke.e)
		cancel()

		if err != nil {
			s.notesLost.Add(1)
			s.notes.Lock()
			if s.notes.dropped == nil {
				s.notes.dropped = map[string]bool{}
			}
			s.notes.dropped[ke.key] = true
			s.notes.Unlock()
		}
	}
}

// released returns the records of a key whose unused numbers rs are
// released for reason, and that holds nothing up to high any more.
func released(rs []Range, high int64, reason string) []journal.Event {
	var es []journal.Event
	for _, r := range rs {
		if r.First >= 1 && r.Len() > 0 { // seal's Range{} is no numbers
			es = append(es, journal.Event{Kind: journal.Released, Range: r, Reason: reason})
		}
	}
	if high > 0 {
		es = append(es, journal.Event{Kind: journal.Closed, Range: Range{First: 1, Last: high}})
	}
	return es
}

// Journal returns the journals of the Allocator's store (see
// [journal.Holder]), or nil when it keeps none. A void noted there of
// numbers the Segment holds and has not issued, or is fetching (reserved
// in the store, not yet arrived), is refused with an error wrapping
// [ErrInvalidArgument]: they would be issued later, void. While a void
// is checked and noted, the fetches of its key (and of the keys that
// share its lock, one in 256) wait. (Numbers another process holds
// unissued cannot be told from those it issued: void only numbers that
// were issued.)
func (s *Segment) Journal() journal.Keeper {
	j := journal.Of(s.alloc)
	if j == nil {
		return nil
	}
	return holding{j, s}
}

// holding is the journals of a store beneath a layer that holds numbers
// drawn and not yet issued (a Segment's blocks, a Queued's queue): a void
// of one of them is refused, for the layer would issue it later, void.
type holding struct {
	journal.Keeper
	layer holder
}

// holder is a layer that holds numbers drawn and not yet issued: unissued
// returns those of r for key, if any. drawing returns the lock its draws
// of key hold read, from the store's reservation until the numbers are
// where unissued sees them: a void holds it from its check to its note,
// so that no number is reserved unseen in between.
type holder interface {
	unissued(key string, r Range) (Range, bool)
	drawing(key string) *sync.RWMutex
}

func (j holding) Note(ctx context.Context, key string, e journal.Event) (journal.Event, error) {
	if e.Kind == journal.Voided {
		unlock, err := lockCtx(ctx, j.layer.drawing(key))
		if err != nil {
			return journal.Event{}, fmt.Errorf("sequence: void %v of key %q: waiting for the draws in flight: %w", e.Range, key, err)
		}
		defer unlock()
		if held, ok := j.layer.unissued(key, e.Range); ok {
			return journal.Event{}, fmt.Errorf("sequence: void %v of key %q: %v is held by this process and not issued yet: %w", e.Range, key, held, ErrInvalidArgument)
		}
	}
	return j.Keeper.Note(ctx, key, e)
}

// lockCtx locks l, or gives up when ctx is done first: a draw that
// hangs (a store that does not answer) holds its read lock until it
// returns, and a void waits no longer than its caller. It returns the
// unlock.
func lockCtx(ctx context.Context, l *sync.RWMutex) (unlock func(), err error) {
	locked := make(chan struct{})
	go func() {
		l.Lock()
		close(locked)
	}()
	select {
	case <-locked:
		return l.Unlock, nil
	case <-ctx.Done():
		go func() {
			<-locked
			l.Unlock()
		}()
		return nil, ctx.Err()
	}
}

// drawing returns the lock of key's stripe that the Segment's fetches
// hold read (see holder).
func (s *Segment) drawing(key string) *sync.RWMutex {
	return &s.voids[uint8(maphash.String(s.keys.seed, key))]
}

// unissued returns the numbers of r that the Segment holds for key and
// has not issued, if any.
func (s *Segment) unissued(key string, r Range) (Range, bool) {
	s.keys.mu.Lock()
	k := s.keys.load(key)
	s.keys.mu.Unlock()
	if k == nil {
		return Range{}, false
	}
	k.lock()
	defer k.unlock()
	var held []Range
	if cur := k.cur.Load(); cur != spent && cur.size > 0 {
		held = append(held, Range{First: k.position(), Last: cur.first + cur.size - 1})
	}
	if next := k.next(); next != nil && next.size > 0 {
		held = append(held, Range{First: next.first + min(next.used.Load(), next.size), Last: next.first + next.size - 1})
	}
	for _, h := range held {
		if lo, hi := max(h.First, r.First), min(h.Last, r.Last); lo <= hi {
			return Range{First: lo, Last: hi}, true
		}
	}
	return Range{}, false
}
