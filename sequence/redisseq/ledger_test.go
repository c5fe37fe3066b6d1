//go:build linux

package redisseq_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// ledgerEnv gives a ledger child its job: like a separate machine, it has
// its own process and state, and shares one Redis and one PostgreSQL
// ledger with the others.
const ledgerEnv = "REDISSEQ_LEDGER_CHILD"

type ledgerSpec struct {
	Mode   string // "segment": Segment over the Allocator; "counter": the strict Counter
	Redis  string
	Ledger string // PostgreSQL DSN
	Stop   string // the child stops when this file exists
	Out    string
}

// runLedgerChild issues numbers with 4 goroutines until the stop file
// appears, keeping on through errors that say Redis or the ledger is away,
// and writes the numbers it got.
func runLedgerChild(js string) int {
	var s ledgerSpec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Redis, MaxRetries: -1})
	defer rdb.Close()
	db, err := sql.Open("pgx", s.Ledger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer db.Close()
	ledger, err := sqlseq.New(db, sqlseq.Postgres, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var g sequence.Gen
	switch s.Mode {
	case "segment":
		seg := sequence.NewSegment(redisseq.NewAllocator(rdb, ledger, &redisseq.AllocatorOptions{Chunk: 500}), sequence.SegmentOptions{Step: 50, MinStep: 50, MaxStep: 50})
		defer seg.Close()
		g = seg
	case "counter":
		g = redisseq.NewCounter(rdb, ledger, &redisseq.CounterOptions{Step: 50})
	case "local":
		// What a bbolt file per machine behind a shared Redis amounts to:
		// a ledger each process has to itself.
		g = redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), &redisseq.CounterOptions{Step: 50})
	}
	var mu sync.Mutex
	var nums []int64
	var wg sync.WaitGroup
	var fatal atomic.Value
	for range 4 {
		wg.Go(func() {
			for {
				if _, err := os.Stat(s.Stop); err == nil {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				n, err := g.Next(ctx, "orders")
				cancel()
				switch {
				case err == nil:
					mu.Lock()
					nums = append(nums, n)
					mu.Unlock()
				case errors.Is(err, sequence.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
					time.Sleep(5 * time.Millisecond)
				default:
					fatal.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	buf := make([]byte, 0, 8*len(nums))
	for _, n := range nums {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
	}
	if err := os.WriteFile(s.Out, buf, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	if err, _ := fatal.Load().(error); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// Four OS processes, each like a machine of its own, issue numbers from
// one Redis in front of one PostgreSQL ledger while Redis is killed and
// restarted empty, and then flushed: no number is issued twice. The same
// with a ledger per process ("local", what a bbolt file per machine gives)
// must repeat numbers: that is why the CLI and config refuse it.
func TestLedgerMultiProcessFaults(t *testing.T) {
	for _, mode := range []string{"segment", "counter", "local"} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.StartServer(t)
			pg := pgtest.Shared(t)
			dsn := pg.NewDatabase(t)
			ledger, err := sqlseq.New(pg.DB(t, dsn), sqlseq.Postgres, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := ledger.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			stop := filepath.Join(dir, "stop")
			const procs = 4
			cmds := make([]*exec.Cmd, procs)
			outs := make([]string, procs)
			for p := range procs {
				outs[p] = filepath.Join(dir, fmt.Sprintf("child%d.bin", p))
				js, _ := json.Marshal(ledgerSpec{Mode: mode, Redis: srv.Addr(), Ledger: dsn, Stop: stop, Out: outs[p]})
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), ledgerEnv+"="+string(js))
				cmds[p] = cmd
			}
			var wg sync.WaitGroup
			errs := make([]error, procs)
			for p, cmd := range cmds {
				wg.Go(func() {
					if out, err := cmd.CombinedOutput(); err != nil {
						errs[p] = fmt.Errorf("child %d: %v\n%s", p, err, out)
					}
				})
			}
			rdb := srv.Client(t)
			waitMark := func(min int64) {
				deadline := time.Now().Add(30 * time.Second)
				for {
					last, err := ledger.Last(context.Background(), "orders")
					if err == nil && last >= min {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("the ledger did not pass %d (at %d, %v)", min, last, err)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			progress := func(min int) {
				// The shared ledger shows progress in segment and counter
				// modes; local mode leaves it alone, so wait a little.
				if mode == "local" {
					time.Sleep(400 * time.Millisecond)
					return
				}
				last, _ := ledger.Last(context.Background(), "orders")
				waitMark(last + int64(min))
			}
			progress(20000)
			srv.Kill()
			time.Sleep(100 * time.Millisecond)
			srv.Restart() // empty: no persistence
			progress(20000)
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			progress(20000)
			os.WriteFile(stop, nil, 0o644)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var all []int64
			for _, out := range outs {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i+8 <= len(b); i += 8 {
					all = append(all, int64(binary.LittleEndian.Uint64(b[i:])))
				}
			}
			slices.Sort(all)
			repeats := len(all) - len(slices.Compact(slices.Clone(all)))
			if mode == "local" {
				if repeats == 0 {
					t.Fatalf("a ledger per process gave no repeat in %d numbers; the test cannot tell", len(all))
				}
				t.Logf("local: a ledger per process repeated %d of %d numbers, as expected", repeats, len(all))
				return
			}
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers", repeats, len(all))
			}
			t.Logf("%s: %d processes, %d numbers through an empty restart and a FLUSHALL, 0 repeats", mode, procs, len(all))
		})
	}
}
