package redisseq_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// Redis in front of a ledger, on Redis's default persistence (snapshots,
// "save 3600 1 300 100 60 10000"), or on an append-only file fsynced every
// second that lost its last writes: numbers are issued, Redis snapshots,
// more are issued, Redis is killed and comes back with the older ranges.
// Their boot is not the new server's, so they are not taken from: the
// keys refill from the ledger, and the numbers issued before the crash,
// by this process or another, never come again. The control writes the
// new run_id into the restored ranges, as if sn did not look, and repeats.
func TestLedgerStaleRestart(t *testing.T) {
	for _, persist := range []string{"rdb", "aof"} {
		for _, gen := range []string{"segment", "counter"} {
			for _, forge := range []bool{false, true} {
				name := persist + "/" + gen
				if forge {
					name += "/forged"
				}
				t.Run(name, func(t *testing.T) {
					repeats := staleRestart(t, persist, gen, forge)
					switch {
					case forge && repeats == 0:
						t.Errorf("control: the restored ranges were trusted and nothing repeated: the test cannot see a repeat")
					case !forge && repeats != 0:
						t.Errorf("%d numbers issued twice after Redis came back with older ranges", repeats)
					}
				})
			}
		}
	}
}

func staleRestart(t *testing.T, persist, gen string, forge bool) (repeats int) {
	ctx := context.Background()
	args := []string{"--save", "3600 1 300 100 60 10000"}
	if persist == "aof" {
		args = []string{"--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "no"}
	}
	srv := redistest.Start(t, redistest.Args(args...))
	ledger := pgLedger(t)
	open := func() (sequence.Gen, func()) {
		rdb := srv.Client(t)
		if gen == "counter" {
			return must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 1000})), func() {}
		}
		seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 1000})),
			sequence.SegmentOptions{Step: 10, MinStep: 10, MaxStep: 10}))
		return seg, func() { seg.Close() }
	}
	seen := map[int64]bool{}
	issue := func(g sequence.Gen, n int) {
		for g != nil && n > 0 {
			n--
			v, err := g.Next(ctx, "orders")
			if errors.Is(err, sequence.ErrRegressed) && forge {
				return // a process that saw the store go back stops; others do not see it
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if seen[v] {
				repeats++
			}
			seen[v] = true
		}
	}
	a, closeA := open()
	b, closeB := open() // another process on the same Redis and ledger
	issue(a, 50)
	issue(b, 50)
	rdb := srv.Client(t)
	if persist == "rdb" {
		if err := rdb.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		rdb.ConfigSet(ctx, "appendfsync", "always") // what is written so far is on disk
		issue(a, 1)
		rdb.ConfigSet(ctx, "appendfsync", "everysec")
	}
	var aofSize int64
	if persist == "aof" {
		aofSize = fileSize(t, srv.AOF(t))
	}
	issue(a, 300)
	issue(b, 300)
	if forge {
		// The control's processes end with Redis: a fetch of theirs
		// still in flight would refill the key before the forgery.
		closeA()
		closeB()
		a, b, closeA, closeB = nil, nil, func() {}, func() {}
	}
	srv.Kill(t)
	if persist == "aof" {
		// The second fsync has not come: the file ends where the last
		// fsync left it.
		if err := os.Truncate(srv.AOF(t), aofSize); err != nil {
			t.Fatal(err)
		}
	}
	srv.Restart(t)
	if forge {
		forgeBoot(t, srv.Client(t))
	}
	c, closeC := open() // a process started after
	issue(a, 300)
	issue(b, 300)
	issue(c, 300)
	closeA()
	closeB()
	closeC()
	t.Logf("%d numbers, %d repeats", len(seen), repeats)
	return repeats
}

// forgeBoot gives every range the server's run_id. A server that has just
// restarted may still be loading its data (LOADING): it tries until the
// ranges carry the new run_id.
func forgeBoot(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	for try := 0; ; try++ {
		info, err := rdb.Info(ctx, "server").Result()
		repl, rerr := rdb.Info(ctx, "replication").Result()
		if err == nil {
			err = rerr
		}
		id, rid := "", ""
		for _, line := range splitLines(info) {
			if len(line) > 7 && line[:7] == "run_id:" {
				id = line[7:]
			}
		}
		for _, line := range splitLines(repl) {
			if len(line) > 14 && line[:14] == "master_replid:" {
				rid = line[14:]
			}
		}
		if id != "" {
			id += ":" + rid
		}
		keys, kerr := rdb.Keys(ctx, "*:range").Result()
		done := err == nil && kerr == nil && id != "" && len(keys) > 0
		for _, k := range keys {
			if rdb.HSet(ctx, k, "boot", id).Err() != nil || rdb.HGet(ctx, k, "boot").Val() != id {
				done = false
			}
		}
		if done {
			return
		}
		if try == 100 {
			t.Fatalf("forging the boot of the ranges: %v, %v, keys %v", err, kerr, keys)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			line := s[start:i]
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			out = append(out, line)
			start = i + 1
		}
	}
	return out
}

// fileSize returns the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
