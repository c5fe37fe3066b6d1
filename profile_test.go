package sn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// continuous is a gapless Gen for the tests: the memory allocator's
// numbers one at a time, with its journal.
type continuous struct{ *sequence.MemoryAllocator }

func (c continuous) Next(ctx context.Context, key string) (int64, error) {
	r, err := c.Allocate(journal.WithDrawn(ctx, true), key, 1)
	return r.First, err
}

func (continuous) Continuous() bool { return true }

func TestProfiles(t *testing.T) {
	gapless := continuous{sequence.NewMemoryAllocator()}
	seg, _ := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	defer seg.Close()
	for _, tt := range []struct {
		template, profile string
		seq               sequence.Gen
		want              string // "" for accepted, else a part of the error
	}{
		{"INV-@<seq, width=6>", "gapless", gapless, ""},
		{"INV-@<seq, width=6>", "gapless", seg, "can leave gaps"},
		{"INV-@<seq, width=6>", "gapless", sequence.NewMemory(), "can leave gaps"},
		{"INV-@<seq, width=6>", "fr-continuous", gapless, ""},
		{"FA@<date, format=yyyy>-@<seq, width=6, reset=year>", "fr-continuous", gapless, ""},
		{"INV/@<date, format=yy>/@<seq, width=8>", "in-gst", seg, ""},
		{"INV/@<date, format=yyyy>/@<seq, width=10>", "in-gst", seg, "up to 19 characters"},
		{"INV_@<seq, width=8>", "in-gst", seg, `can print '_'`},
		{"INV-@<seq, width=8, overflow=grow>", "in-gst", seg, "characters"},
		{"INV-@<customer, maxlen=4>-@<seq, width=6>", "in-gst", seg, "customer at offset 4 can print"},
		{"INV-@<customer, maxlen=4, chars=A-Z>-@<seq, width=6>", "in-gst", seg, ""},
		{"INV-@<seq, width=6>", "ch-qr", seg, "want one of gapless, in-gst, fr-continuous"},
	} {
		_, err := sn.New(tt.template, sn.WithSequence("seq", tt.seq), sn.WithProfile(tt.profile))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s under %s: %v", tt.template, tt.profile, err)
		case tt.want != "" && (!errors.Is(err, sn.ErrProfile) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s under %s over %T: %v, want ErrProfile and %q", tt.template, tt.profile, tt.seq, err, tt.want)
		case err != nil:
			t.Logf("%s under %s: %v", tt.template, tt.profile, err)
		}
	}

	// fr-continuous: the clock's instant only.
	g, err := sn.New("FA-@<seq, width=6>", sn.WithSequence("seq", gapless), sn.WithProfile("fr-continuous"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Issue(ctx, sn.Request{At: time.Now().Add(-48 * time.Hour)}); !errors.Is(err, sn.ErrProfile) || !errors.Is(err, sn.ErrInstant) {
		t.Errorf("a back-dated call under fr-continuous: %v, want ErrProfile and ErrInstant", err)
	}
	var b sn.Batch
	if err := g.Append(ctx, &b, sn.Request{At: time.Now()}); !errors.Is(err, sn.ErrProfile) {
		t.Errorf("Append with At under fr-continuous: %v", err)
	}
	if n, err := g.Next(ctx); err != nil || n != "FA-000001" {
		t.Errorf("Next under fr-continuous: %q %v", n, err)
	}
	if err := g.Void(ctx, "FA-000001", "cancelled, credit note FA-000002"); err != nil {
		t.Errorf("Void under fr-continuous: %v", err)
	}
}
