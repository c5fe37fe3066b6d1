package sequence_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

// Ping passes through Segment, Queued and Balanced to the store, which a
// bbolt file is here: it answers until it is closed.
func TestPing(t *testing.T) {
	ctx := t.Context()
	open := func() *boltseq.Store {
		st, err := boltseq.Open(filepath.Join(t.TempDir(), "sn.db"), boltseq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := open(), open()
	segA, segB := must(sequence.NewSegment(a, sequence.SegmentOptions{})), must(sequence.NewSegment(b, sequence.SegmentOptions{}))
	defer segA.Close()
	defer segB.Close()
	q, err := sequence.NewQueued(segA, sequence.QueuedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	bal := mustBalanced(t, []sequence.Gen{segA, segB}, sequence.BalancedOptions{})
	for _, p := range []sequence.Pinger{a, segA, q, bal} {
		if err := p.Ping(ctx); err != nil {
			t.Errorf("%T.Ping with the file open: %v", p, err)
		}
	}
	if err := sequence.Ping(ctx, sequence.NewMemory()); err != nil {
		t.Errorf("Ping of a Gen that is no Pinger: %v", err)
	}
	a.Close()
	for _, p := range []sequence.Pinger{a, segA, q} {
		if err := p.Ping(ctx); !errors.Is(err, sequence.ErrClosed) {
			t.Errorf("%T.Ping with the file closed: %v; want ErrClosed", p, err)
		}
	}
	if err := bal.Ping(ctx); err != nil {
		t.Errorf("Balanced.Ping with one of two stores answering: %v", err)
	}
	b.Close()
	if err := bal.Ping(ctx); !errors.Is(err, sequence.ErrUnavailable) || !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Balanced.Ping with no store answering: %v; want ErrUnavailable wrapping each store's error", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := sequence.Ping(cancelled, sequence.NewMemory()); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a done context: %v", err)
	}
}
