package sequence

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// maxNotes bounds the journal records a Segment keeps waiting for its
// store: past it, a release is not journaled, and its numbers stay Open
// in an [Audit] (issued or not, the journal cannot say), never wrong.
const maxNotes = 1 << 16

// segments numbers the Segments of the process, for their names.
var segments atomic.Int64

type keyEvent struct {
	key string
	e   Event
}

// note queues records for key's journal, written in the background by
// one goroutine; Close writes what is left. It does nothing when the
// Allocator keeps no journal.
func (s *Segment) note(key string, es ...Event) {
	j, ok := s.alloc.(Journal)
	if !ok || len(es) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes.Lock()
	defer s.notes.Unlock()
	for _, e := range es {
		if len(s.notes.q) < maxNotes {
			s.notes.q = append(s.notes.q, keyEvent{key, e})
		}
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
			s.writeNotes(WithBy(context.Background(), s.by), j, q)
		}
	}()
}

// writeNotes writes q, each record within FetchTimeout, until parent is
// done.
func (s *Segment) writeNotes(parent context.Context, j Journal, q []keyEvent) {
	for _, ke := range q {
		if parent.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(parent, s.opts.FetchTimeout)
		_, _ = j.Note(ctx, ke.key, ke.e)
		cancel()
	}
}

// released returns the records of a key whose unused numbers rs are
// released for reason, and that holds nothing up to high any more.
func released(rs []Range, high int64, reason string) []Event {
	var es []Event
	for _, r := range rs {
		if r.Len() > 0 {
			es = append(es, Event{Kind: Released, Range: r, Reason: reason})
		}
	}
	if high > 0 {
		es = append(es, Event{Kind: Closed, Range: Range{1, high}})
	}
	return es
}

func (s *Segment) journal(op string) (Journal, error) {
	j, ok := s.alloc.(Journal)
	if !ok {
		return nil, fmt.Errorf("sequence: Segment.%s: %T keeps no journal: %w", op, s.alloc, errors.ErrUnsupported)
	}
	return j, nil
}

// Note appends e to key's journal in the Allocator's store (see
// [Journal]).
func (s *Segment) Note(ctx context.Context, key string, e Event) (Event, error) {
	j, err := s.journal("Note")
	if err != nil {
		return Event{}, err
	}
	return j.Note(ctx, key, e)
}

// Events reads key's journal in the Allocator's store (see [Journal]).
func (s *Segment) Events(ctx context.Context, key string, after int64, limit int) ([]Event, error) {
	j, err := s.journal("Events")
	if err != nil {
		return nil, err
	}
	return j.Events(ctx, key, after, limit)
}

// Head returns where key's journal in the Allocator's store ends (see
// [Journal]).
func (s *Segment) Head(ctx context.Context, key string) (Head, error) {
	j, err := s.journal("Head")
	if err != nil {
		return Head{}, err
	}
	return j.Head(ctx, key)
}

// Prune prunes key's journal in the Allocator's store (see [Pruner]).
func (s *Segment) Prune(ctx context.Context, key string, through int64) (Event, error) {
	p, ok := s.alloc.(Pruner)
	if !ok {
		return Event{}, fmt.Errorf("sequence: Segment.Prune: %T cannot prune journals: %w", s.alloc, errors.ErrUnsupported)
	}
	return p.Prune(ctx, key, through)
}
