package config_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// One rule for every Close of sn's: the first releases, a second returns
// an error wrapping sequence.ErrClosed.
func TestCloseTwice(t *testing.T) {
	ctx := t.Context()
	seg := must(sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{}))
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
	cfg, err := config.Decode([]byte("templates:\n  orders: {template: \"SN-@<seq, width=8>\"}\n"), "yaml")
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

// One rule for constructors given an argument they cannot use, nil
// included: an error wrapping sequence.ErrInvalidArgument, never a panic.
func TestConstructorsRefuseBadArguments(t *testing.T) {
	mem := sequence.NewMemoryAllocator()
	for name, call := range map[string]func() error{
		"NewSegment(nil)": func() error { _, err := sequence.NewSegment(nil, sequence.SegmentOptions{}); return err },
		"NewSegment(MinStep > Max)": func() error {
			_, err := sequence.NewSegment(mem, sequence.SegmentOptions{MinStep: 10, MaxStep: 5})
			return err
		},
		"NewSegment(Prefetch 2)": func() error { _, err := sequence.NewSegment(mem, sequence.SegmentOptions{Prefetch: 2}); return err },
		"NewQueued(nil)":         func() error { _, err := sequence.NewQueued(nil, sequence.QueuedOptions{}); return err },
		"NewBalanced(3 Gens)": func() error {
			_, err := sequence.NewBalanced(make([]sequence.Gen, 3), sequence.BalancedOptions{})
			return err
		},
		"NewBalanced(a nil Gen)": func() error {
			_, err := sequence.NewBalanced(make([]sequence.Gen, 2), sequence.BalancedOptions{})
			return err
		},
		"redisseq.NewAllocator(nil)": func() error { _, err := redisseq.NewAllocator(nil, mem, redisseq.AllocatorOptions{}); return err },
		"redisseq.NewAllocator(ledger nil)": func() error {
			_, err := redisseq.NewAllocator(redis.NewClient(&redis.Options{}), nil, redisseq.AllocatorOptions{})
			return err
		},
		"redisseq.NewRedisOnlyAllocator(nil)": func() error { _, err := redisseq.NewRedisOnlyAllocator(nil, redisseq.AllocatorOptions{}); return err },
		"redisseq.NewCounter(nil)":            func() error { _, err := redisseq.NewCounter(nil, mem, redisseq.CounterOptions{}); return err },
		"redisseq.NewLock(nil)":               func() error { _, err := redisseq.NewLock(nil, "k", time.Second); return err },
		"redisseq.NewLeaser(nil)":             func() error { _, err := redisseq.NewLeaser(nil, redisseq.LeaserOptions{}); return err },
		"sqlseq.NewLeaser(nil)":               func() error { _, err := sqlseq.NewLeaser(nil, sqlseq.LeaserOptions{}); return err },
		"sqlseq.New(bad table)": func() error {
			_, err := sqlseq.New(new(sql.DB), sqlseq.Postgres, sqlseq.Options{Table: "a;b"})
			return err
		},
		"boltseq.Open(\"\")": func() error { _, err := boltseq.Open("", boltseq.Options{}); return err },
		"Memory{Start: -1}": func() error {
			_, err := (&sequence.Memory{Start: -1}).Next(t.Context(), "k")
			return err
		},
	} {
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("panicked: %v", v)
				}
			}()
			err = call()
		}()
		if !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidArgument", name, err)
		}
	}
}
