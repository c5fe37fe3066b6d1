//go:build linux

package redisseq_test

import (
	"bytes"
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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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

// regressedExit is a ledger child's exit status when its generator refused
// to go on because the store went backwards (sequence.ErrRegressed).
const regressedExit = 3

// otherLedgerExit is a ledger child's exit status when Redis held a range
// from another ledger (redisseq.ErrOtherLedger).
const otherLedgerExit = 4

type ledgerSpec struct {
	Mode   string // "segment": Segment over the Allocator; "counter": the strict Counter
	Redis  string
	Ledger string // PostgreSQL DSN
	Stop   string // the child stops when this file exists
	Out    string

	// Failover mode: the child issues from Redis (a master whose every
	// write waits for Replicas replicas) until the file Switch exists, and
	// from Replica (promoted by then) after, with Gen: "segment" or
	// "counter".
	Gen      string
	Replica  string
	Switch   string
	Replicas int
}

// switchAllocator is what a client following a failover amounts to: it
// takes blocks from the master until the switch file appears, and from the
// promoted replica after.
type switchAllocator struct {
	before, after sequence.Allocator
	file          string
}

func (a *switchAllocator) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	if _, err := os.Stat(a.file); err == nil {
		return a.after.Allocate(ctx, key, n)
	}
	return a.before.Allocate(ctx, key, n)
}

// switchGen is the same for the strict Counter, which has no allocator to
// switch: one Counter on the master, one on the promoted replica.
type switchGen struct {
	before, after sequence.Gen
	file          string
}

func (g *switchGen) Next(ctx context.Context, key string) (int64, error) {
	if _, err := os.Stat(g.file); err == nil {
		return g.after.Next(ctx, key)
	}
	return g.before.Next(ctx, key)
}

// anonymous is a MemoryAllocator without its identity.
type anonymous struct{ m *sequence.MemoryAllocator }

func (a anonymous) Allocate(ctx context.Context, key string, n int64) (sequence.Range, error) {
	return a.m.Allocate(ctx, key, n)
}

func (a anonymous) Floor(ctx context.Context, key string, floor int64) error {
	return a.m.Floor(ctx, key, floor)
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
	ledger, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var g sequence.Gen
	switch s.Mode {
	case "stream":
		return runStreamChild(s, rdb, ledger)
	case "segment":
		seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 500})), sequence.SegmentOptions{Step: 50, MinStep: 50, MaxStep: 50}))
		defer seg.Close()
		g = seg
	case "counter":
		g = must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 50}))
	case "failover":
		rr := redis.NewClient(&redis.Options{Addr: s.Replica, MaxRetries: -1})
		defer rr.Close()
		if s.Gen == "counter" {
			g = &switchGen{
				before: must(redisseq.NewCounter(rdb, ledger, redisseq.CounterOptions{Step: 500, Replicas: s.Replicas, ReplicaTimeout: 200 * time.Millisecond})),
				after:  must(redisseq.NewCounter(rr, ledger, redisseq.CounterOptions{Step: 500})),
				file:   s.Switch,
			}
			break
		}
		sw := &switchAllocator{
			before: must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 500, Replicas: s.Replicas, ReplicaTimeout: 200 * time.Millisecond})),
			after:  must(redisseq.NewAllocator(rr, ledger, redisseq.AllocatorOptions{Chunk: 500})),
			file:   s.Switch,
		}
		seg := must(sequence.NewSegment(sw, sequence.SegmentOptions{Step: 50, MinStep: 50, MaxStep: 50}))
		defer seg.Close()
		g = seg
	case "local":
		// What a bbolt file per machine behind a shared Redis amounts to:
		// a ledger each process has to itself.
		g = must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{Step: 50}))
	case "anonymous":
		// The same with ledgers that have no identity: nothing can tell
		// them apart.
		g = must(redisseq.NewCounter(rdb, anonymous{sequence.NewMemoryAllocator()}, redisseq.CounterOptions{Step: 50}))
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
		if errors.Is(err, sequence.ErrRegressed) {
			return regressedExit
		}
		if errors.Is(err, redisseq.ErrOtherLedger) {
			return otherLedgerExit
		}
		return 1
	}
	return 0
}

// Four OS processes, each like a machine of its own, issue numbers from
// one Redis in front of one PostgreSQL ledger while Redis is killed and
// restarted empty, and then flushed: no number is issued twice. With a
// ledger per process ("local", what a bbolt file per machine gives), every
// process but the first finds the range reserved from another ledger and
// stops (redisseq.ErrOtherLedger). The control, ledgers per process
// without an identity ("anonymous"), must repeat numbers: that is what the
// identity check, and the CLI and config's refusal, prevent.
func TestLedgerMultiProcessFaults(t *testing.T) {
	for _, mode := range []string{"segment", "counter", "local", "anonymous"} {
		t.Run(mode, func(t *testing.T) {
			srv := redistest.Start(t)
			pg := pgtest.Shared(t)
			dsn := pg.NewDatabase(t)
			ledger, err := sqlseq.New(pg.DB(t, dsn), sqlseq.Postgres, sqlseq.Options{})
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
			refused := make([]bool, procs)
			for p, cmd := range cmds {
				// Started here, so that the test may signal cmd.Process
				// without racing with its start.
				out := new(bytes.Buffer)
				cmd.Stdout, cmd.Stderr = out, out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					err := cmd.Wait()
					if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == otherLedgerExit && mode == "local" {
						refused[p] = true
					} else if err != nil {
						errs[p] = fmt.Errorf("child %d: %v\n%s", p, err, out.Bytes())
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
				if mode != "local" && mode != "anonymous" {
					last, _ := ledger.Last(context.Background(), "orders")
					waitMark(last + int64(min))
					return
				}
				// Local mode leaves the shared ledger alone: follow the
				// range in Redis instead. After an empty restart it is
				// absent until a process refills it from its own ledger,
				// wherever that one stands: start counting from there.
				cur := func() (int64, bool) {
					n, err := rdb.HGet(context.Background(), "sn:{orders}:range", "cur").Int64()
					return n, err == nil
				}
				deadline := time.Now().Add(30 * time.Second)
				start, ok := cur()
				for ; !ok; start, ok = cur() {
					if time.Now().After(deadline) {
						t.Fatal("the range never came back to Redis")
					}
					time.Sleep(5 * time.Millisecond)
				}
				for n, _ := cur(); n < start+int64(min); n, _ = cur() {
					if time.Now().After(deadline) {
						t.Fatalf("the range in Redis did not pass %d (at %d)", start+int64(min), n)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			progress(20000)
			srv.Kill(t)
			time.Sleep(100 * time.Millisecond)
			srv.Restart(t) // empty: no persistence
			progress(20000)
			// One FLUSHALL; in local mode five more, since each repeats
			// numbers only when a process whose own ledger lags refills
			// first (three times in four).
			flushes := 1
			if mode == "anonymous" {
				flushes = 6
			}
			for f := range flushes {
				// In anonymous mode one process in turn refills first, the
				// others stopped (SIGSTOP) until it has: every process's
				// own ledger gets its turn, and those that lag repeat what
				// the others issued. (Left to the scheduler, the process
				// furthest ahead may win every time, and nothing repeats.)
				var paused []*exec.Cmd
				if mode == "anonymous" {
					for p, cmd := range cmds {
						if p != f%procs {
							cmd.Process.Signal(syscall.SIGSTOP)
							paused = append(paused, cmd)
						}
					}
				}
				if err := rdb.FlushAll(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
				progress(20000 / flushes)
				for _, cmd := range paused {
					cmd.Process.Signal(syscall.SIGCONT)
				}
			}
			os.WriteFile(stop, nil, 0o644)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			all, repeats := readNumbers(t, outs)
			if mode == "anonymous" {
				if repeats == 0 {
					t.Fatalf("a ledger per process gave no repeat in %d numbers; the test cannot tell", len(all))
				}
				t.Logf("anonymous: a ledger per process without an identity repeated %d of %d numbers, as expected", repeats, len(all))
				return
			}
			if stopped := len(slices.DeleteFunc(slices.Clone(refused), func(r bool) bool { return !r })); mode == "local" && stopped < procs-1 {
				t.Errorf("local: %d of %d processes found the range reserved from another ledger, want at least %d", stopped, procs, procs-1)
			} else if mode == "local" {
				t.Logf("local: %d of %d processes stopped with ErrOtherLedger", stopped, procs)
			}
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers", repeats, len(all))
			}
			t.Logf("%s: %d processes, %d numbers through an empty restart and a FLUSHALL, 0 repeats", mode, procs, len(all))
		})
	}
}

// readNumbers reads the numbers the children wrote and counts repeats.
func readNumbers(t *testing.T, outs []string) (all []int64, repeats int) {
	t.Helper()
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
	return all, len(all) - len(slices.Compact(slices.Clone(all)))
}

// Four OS processes issue numbers from a Redis master in front of one
// PostgreSQL ledger, through Segments over the Allocator or through the
// strict Counter. The master's replica loses its link and falls behind;
// the master is killed; the stale replica takes over and every process
// follows it. The promoted replica has another run_id than the master
// whose ranges it holds, so they are not taken from: the keys refill from
// the ledger, above everything, with or without Replicas (which only
// shortens the gap), and no number repeats. The control ("forged") writes
// the replica's run_id into the stale range after the promotion, as if sn
// did not look: the replica then hands out again what the master issued
// while it lagged, which shows the test can see repeats.
func TestLedgerMultiProcessFailover(t *testing.T) {
	for _, tc := range []struct {
		name, gen string
		replicas  int
		forge     bool
	}{
		{"segment/replicas=1", "segment", 1, false}, {"segment/async", "segment", 0, false}, {"segment/forged", "segment", 0, true},
		{"counter/replicas=1", "counter", 1, false}, {"counter/async", "counter", 0, false}, {"counter/forged", "counter", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			master := redistest.Start(t)
			replica := redistest.StartReplica(t, master)
			pg := pgtest.Shared(t)
			dsn := pg.NewDatabase(t)
			ledger, err := sqlseq.New(pg.DB(t, dsn), sqlseq.Postgres, sqlseq.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := ledger.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			stop, sw := filepath.Join(dir, "stop"), filepath.Join(dir, "switch")
			const procs = 4
			outs := make([]string, procs)
			errs := make([]error, procs)
			regressed := make([]bool, procs)
			var wg sync.WaitGroup
			for p := range procs {
				outs[p] = filepath.Join(dir, fmt.Sprintf("child%d.bin", p))
				js, _ := json.Marshal(ledgerSpec{
					Mode: "failover", Redis: master.Addr(), Ledger: dsn, Stop: stop, Out: outs[p],
					Gen: tc.gen, Replica: replica.Addr(), Switch: sw, Replicas: tc.replicas,
				})
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), ledgerEnv+"="+string(js))
				wg.Go(func() {
					out, err := cmd.CombinedOutput()
					if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == regressedExit {
						regressed[p] = true
					} else if err != nil {
						errs[p] = fmt.Errorf("child %d: %v\n%s", p, err, out)
					}
				})
			}
			exited := make(chan struct{})
			go func() { wg.Wait(); close(exited) }()
			// progress waits until the ledger has moved min numbers on, or
			// every child has stopped.
			progress := func(min int64) {
				start, _ := ledger.Last(ctx, "orders")
				deadline := time.Now().Add(30 * time.Second)
				for {
					last, err := ledger.Last(ctx, "orders")
					if err == nil && last >= start+min {
						return
					}
					select {
					case <-exited:
						return
					default:
					}
					if time.Now().After(deadline) {
						os.WriteFile(stop, nil, 0o644)
						wg.Wait()
						t.Fatalf("the ledger did not pass %d (at %d, %v); children: %v", start+min, last, err, errors.Join(errs...))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			progress(20000)
			// The replica stops following (REPLICAOF NO ONE): it holds what
			// it had received at that moment and nothing after, a replica
			// whose link to the master broke. Its range must have numbers
			// left, or it would refill from the ledger and the test would
			// show only that an exhausted range is safe; try again until it
			// has.
			redistest.Detach(t, replica, master, func(ctx context.Context, rr *redis.Client) bool {
				r, err := rr.HMGet(ctx, "sn:{orders}:range", "cur", "max").Result()
				if err != nil {
					t.Fatal(err)
				}
				cur, _ := strconv.ParseInt(fmt.Sprint(r[0]), 10, 64)
				hi, _ := strconv.ParseInt(fmt.Sprint(r[1]), 10, 64)
				if cur < hi {
					t.Logf("the replica lags with numbers %d..%d left in its range", cur+1, hi)
				}
				return cur < hi
			})
			if tc.forge {
				rr := replica.Client(t)
				id := redistest.InfoField(t, rr, "server", "run_id") + ":" + redistest.InfoField(t, rr, "replication", "master_replid")
				if err := rr.HSet(ctx, "sn:{orders}:range", "boot", id).Err(); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(700 * time.Millisecond)
			master.Kill(t)
			os.WriteFile(sw, nil, 0o644)
			progress(20000)
			os.WriteFile(stop, nil, 0o644)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			all, repeats := readNumbers(t, outs)
			stopped := 0
			for _, r := range regressed {
				if r {
					stopped++
				}
			}
			if tc.forge {
				// Each process's Segment refuses numbers below the highest
				// it issued (ErrRegressed); what it cannot see, numbers
				// another process issued, repeats.
				if repeats == 0 && stopped == 0 {
					t.Fatalf("a failover to a lagging replica whose stale range was forged went unseen in %d numbers; the test cannot tell", len(all))
				}
				t.Logf("%s: the lagging replica repeated %d of %d numbers; %d of %d processes stopped with ErrRegressed", tc.name, repeats, len(all), stopped, procs)
				return
			}
			if stopped != 0 {
				t.Errorf("%d processes saw the store go backwards", stopped)
			}
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers", repeats, len(all))
			}
			t.Logf("%s: %d processes, %d numbers through a failover to a replica that lagged, 0 repeats", tc.name, procs, len(all))
		})
	}
}
