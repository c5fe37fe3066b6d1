package etcdseq_test

import (
	"errors"
	"testing"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/record"
)

// A journal record is written once (adversary run 4): a head moved back
// through the records, with record 4 left past it, makes the next
// Allocate refuse with ErrCorrupt (the commit compares the record
// absent), and record 4 stays as it was. The control: VerifyChain finds
// the edit before the Allocate.
func TestJournalWrittenOnce(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	for range 4 {
		if _, err := s.Allocate(ctx, "once", 10); err != nil {
			t.Fatal(err)
		}
	}
	events, head, _ := sequence.ReadJournal(ctx, s, "once")
	rs, _ := s.Records().Get(ctx, journal.HeadKey("once"))
	back := sequence.Head{Seq: 3, Hash: events[2].Hash, Mark: head.Mark}
	if ok, err := s.Records().Commit(ctx, rs, []record.Op{record.Put(journal.HeadKey("once"), journal.EncodeHead(back))}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e2, h2, _ := sequence.ReadJournal(ctx, s, "once")
	if sequence.VerifyChain("once", e2, h2) == nil {
		t.Fatal("control: the head moved back verifies")
	}
	if _, err := s.Allocate(ctx, "once", 1); !errors.Is(err, journal.ErrCorrupt) {
		t.Errorf("Allocate after the head was moved back: %v; want ErrCorrupt", err)
	}
	after, _, _ := sequence.ReadJournal(ctx, s, "once")
	if after[3].Hash != events[3].Hash {
		t.Errorf("record 4 was written over")
	}
}
