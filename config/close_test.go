package config_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/snowflake"
)

// One rule for every Close of sn's: the first releases, a second returns
// an error wrapping sequence.ErrClosed.
func TestCloseTwice(t *testing.T) {
	ctx := t.Context()
	seg := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	qd, err := sequence.NewQueued(sequence.NewMemory(), sequence.QueuedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bal, err := sequence.NewBalanced([]sequence.Gen{sequence.NewMemory(), sequence.NewMemory()}, sequence.BalancedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := boltseq.Open(filepath.Join(t.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sf, err := snowflake.New(ctx, snowflake.Twitter, snowflake.Options{Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("templates:\n  orders: {template: \"SN-@<seq, width=8>\"}\n"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(ctx, config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]io.Closer{
		"Segment": seg, "Queued": qd, "Balanced": bal, "boltseq.Store": store, "snowflake.Gen": sf, "config.Set": set,
	} {
		if err := c.Close(); err != nil {
			t.Errorf("%s: first Close: %v", name, err)
		}
		if err := c.Close(); !errors.Is(err, sequence.ErrClosed) {
			t.Errorf("%s: second Close: %v, want ErrClosed", name, err)
		}
	}
}
