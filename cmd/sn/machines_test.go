package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
)

// machine is one host that runs sn next again and again, as a batch job or
// a script would, from its own config file and its own state directory.
// Now and then its sn is killed with SIGKILL mid-run, as a host that loses
// power.
type machine struct {
	dir, cfg string
	nums     []int64 // every number sn printed in full
	runs     int     // runs of sn
	failed   int     // runs that exited with an error
	killed   int     // runs killed with SIGKILL
	stderr   string  // the last error output
}

// machines is a fleet of machines sharing one Redis and one ledger.
type machines struct {
	t      *testing.T
	list   []*machine
	stop   atomic.Bool
	issued atomic.Int64 // numbers printed so far, by all machines
	// calm stops the killing of runs. A run killed while it holds a
	// refill lock stalls the others for the lock's 10 s, and one killed
	// after drawing numbers leaves them unprinted: a control that must
	// show repeats turns it on, so that neither hides them.
	calm atomic.Bool
	wg   sync.WaitGroup
}

// config is a machine's config file.
func machineConfig(backend, redisAddr, ledger, extra string) string {
	return fmt.Sprintf("store: {backend: %s, url: \"redis://%s/0\", ledger: %q%s}\ntemplates:\n  orders: {template: \"SN@<seq, width=12>\"}\n",
		backend, redisAddr, ledger, extra)
}

// startMachines starts n machines, each with its own directory and the
// config file cfg.
func startMachines(t *testing.T, n int, cfg string) *machines {
	f := &machines{t: t}
	for range n {
		dir := t.TempDir()
		f.list = append(f.list, &machine{dir: dir, cfg: writeConfig(t, dir, "sn.yaml", cfg)})
	}
	for i, m := range f.list {
		rnd := rand.New(rand.NewPCG(uint64(i), 8))
		f.wg.Go(func() { f.run(m, rnd) })
	}
	t.Cleanup(f.halt)
	return f
}

// run runs sn next on m until the fleet halts.
func (f *machines) run(m *machine, rnd *rand.Rand) {
	for !f.stop.Load() {
		n := 1 + rnd.IntN(300)
		cmd := snCommand(f.t, []string{"HOME=" + m.dir, "XDG_STATE_HOME=" + filepath.Join(m.dir, "state")},
			"next", "--config", m.cfg, "orders", "-n", strconv.Itoa(n))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			f.t.Error(err)
			return
		}
		kill := rnd.IntN(8) == 0 && !f.calm.Load()
		if kill {
			time.AfterFunc(time.Duration(rnd.IntN(30))*time.Millisecond, func() { cmd.Process.Kill() })
		}
		err := cmd.Wait()
		m.runs++
		switch {
		case kill && cmd.ProcessState.ExitCode() == -1:
			m.killed++
		case err != nil:
			m.failed++
			m.stderr = errOut.String()
		}
		// A line is a number only when printed in full: a run killed
		// while writing leaves a part of one.
		text := out.String()
		text = text[:strings.LastIndexByte(text, '\n')+1]
		for _, s := range strings.Fields(text) {
			v, err := strconv.ParseInt(strings.TrimPrefix(s, "SN"), 10, 64)
			if err != nil || len(s) != len("SN")+12 {
				f.t.Errorf("sn printed %q", s)
				continue
			}
			m.nums = append(m.nums, v)
		}
		f.issued.Add(int64(strings.Count(text, "\n")))
	}
}

// progress waits until the machines have printed n more numbers.
func (f *machines) progress(n int64) {
	f.t.Helper()
	start := f.issued.Load()
	for deadline := time.Now().Add(60 * time.Second); f.issued.Load() < start+n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.halt()
			f.t.Fatalf("the machines printed %d numbers in 60s, want %d; %s", f.issued.Load()-start, n, f.summary())
		}
	}
}

// halt stops the machines and waits for them.
func (f *machines) halt() {
	f.stop.Store(true)
	f.wg.Wait()
}

// rewrite replaces every machine's config file, as an operator pointing
// them all at a new server would; a run reads either the old file or the
// new one.
func (f *machines) rewrite(cfg string) {
	f.t.Helper()
	for _, m := range f.list {
		tmp := filepath.Join(m.dir, "sn.yaml.new")
		if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
			f.t.Fatal(err)
		}
		if err := os.Rename(tmp, m.cfg); err != nil {
			f.t.Fatal(err)
		}
	}
}

// repeats halts the machines and counts the numbers printed more than
// once, over all of them.
func (f *machines) repeats() (total, repeats int) {
	f.halt()
	var all []int64
	for _, m := range f.list {
		all = append(all, m.nums...)
	}
	slices.Sort(all)
	return len(all), len(all) - len(slices.Compact(all))
}

func (f *machines) summary() string {
	var b strings.Builder
	for i, m := range f.list {
		fmt.Fprintf(&b, "\nmachine %d: %d runs, %d numbers, %d failed, %d killed", i, m.runs, len(m.nums), m.failed, m.killed)
		if m.stderr != "" {
			fmt.Fprintf(&b, "; last error: %s", strings.TrimSpace(m.stderr))
		}
	}
	return b.String()
}

// Four machines, each running sn next from its own config file and state
// directory, share one Redis and one PostgreSQL ledger; now and then a
// machine's sn is killed mid-run. Redis is killed and restarted empty,
// then flushed. No number is printed twice, by either Redis backend.
func TestMachinesRedisLost(t *testing.T) {
	for _, backend := range []string{"redis", "redis-strict"} {
		t.Run(backend, func(t *testing.T) {
			srv := redistest.Start(t) // no persistence: a restart is empty
			ledger := pgtest.Shared(t).NewDatabase(t)
			f := startMachines(t, 4, machineConfig(backend, srv.Addr(), ledger, ", step: 100"))
			f.progress(5000)
			srv.Kill(t)
			time.Sleep(300 * time.Millisecond) // runs fail while Redis is away
			srv.Restart(t)
			f.progress(5000)
			if err := srv.Client(t).FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			f.progress(5000)
			total, repeats := f.repeats()
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers; %s", repeats, total, f.summary())
			}
			t.Logf("%s: 4 machines, %d numbers through a kill -9 and empty restart of Redis and a FLUSHALL, 0 repeats;%s", backend, total, f.summary())
			f.gaps(t)
		})
	}
}

// gaps runs sn gaps on the fleet's ledger, which must explain every
// number, and report none that a machine printed as unused, skipped or
// void.
func (f *machines) gaps(t *testing.T) {
	printed := map[int64]bool{}
	for _, m := range f.list {
		for _, n := range m.nums {
			printed[n] = true
		}
	}
	r := runSN(t, "", []string{"XDG_STATE_HOME=" + f.list[0].dir}, "gaps", "--config", f.list[0].cfg, "orders", "--all")
	if r.code != 0 {
		t.Fatalf("sn gaps: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	counts := map[string]int64{}
	for _, sp := range gapSpans(r.stdout) {
		counts[sp.state] += sp.last - sp.first + 1
		if sp.state == "issued" || sp.state == "open" {
			continue
		}
		for n := sp.first; n <= sp.last; n++ {
			if printed[n] {
				t.Errorf("sn gaps: %d, printed, is %s: %s", n, sp.state, sp.line)
				break
			}
		}
	}
	t.Logf("sn gaps over the ledger: %v", counts)
}

// gapSpan is a line of sn gaps: a run of numbers and its state.
type gapSpan struct {
	first, last int64
	state, line string
}

// gapSpans reads the runs sn gaps printed ("12-40\tvoid\t..." or
// "7\tissued").
func gapSpans(stdout string) []gapSpan {
	var out []gapSpan
	for _, line := range lines(stdout) {
		span, state, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		state, _, _ = strings.Cut(state, "\t")
		lo, hi, found := strings.Cut(span, "-")
		if !found {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 == nil && err2 == nil {
			out = append(out, gapSpan{a, b, state, line})
		}
	}
	return out
}

// Four machines run sn next against a Redis master with a replica, over
// one PostgreSQL ledger. The replica's link breaks while its copy of the
// range still has numbers left; the master goes on for a while and is
// killed; the operator points every machine's config at the replica,
// which gets a replica of its own. The replica's run_id is not the
// master's, so the range it holds is not taken from: with or without
// replicas: 1 in the config, no number repeats (replicas: 1 only makes the
// gap smaller). The control writes the replica's run_id into its stale
// range, as if sn did not look: the replica hands out again what the
// master issued, and numbers repeat.
func TestMachinesFailover(t *testing.T) {
	for _, tc := range []struct {
		name, backend string
		replicas      int
		forge         bool
	}{
		{"redis/replicas=1", "redis", 1, false}, {"redis/async", "redis", 0, false}, {"redis/forged", "redis", 0, true},
		{"redis-strict/replicas=1", "redis-strict", 1, false}, {"redis-strict/async", "redis-strict", 0, false}, {"redis-strict/forged", "redis-strict", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master := redistest.Start(t)
			replica := redistest.StartReplica(t, master)
			ledger := pgtest.Shared(t).NewDatabase(t)
			extra := ", step: 100"
			if tc.replicas > 0 {
				extra += fmt.Sprintf(", replicas: %d, replica_timeout: 200ms", tc.replicas)
			}
			f := startMachines(t, 4, machineConfig(tc.backend, master.Addr(), ledger, extra))
			f.progress(5000)
			if tc.forge {
				// The control: the range the replica holds must be
				// printed twice, once by each server.
				f.calm.Store(true)
			}
			var left string
			var stale int64 // the last number of the range the replica saw issued
			redistest.Detach(t, replica, master, func(ctx context.Context, rr *redis.Client) bool {
				r, err := rr.HMGet(ctx, "sn:{SN@<seq>}:range", "cur", "max").Result()
				if err != nil {
					t.Fatal(err)
				}
				cur, _ := strconv.ParseInt(fmt.Sprint(r[0]), 10, 64)
				hi, _ := strconv.ParseInt(fmt.Sprint(r[1]), 10, 64)
				left, stale = fmt.Sprintf("%d..%d", cur+1, hi), cur
				return cur < hi
			})
			t.Logf("the replica lags with numbers %s left in its range", left)
			if tc.forge {
				rr := replica.Client(t)
				id := redistest.InfoField(t, rr, "server", "run_id") + ":" + redistest.InfoField(t, rr, "replication", "master_replid")
				if err := rr.HSet(context.Background(), "sn:{SN@<seq>}:range", "boot", id).Err(); err != nil {
					t.Fatal(err)
				}
			}
			// The master goes on past what the replica saw issued, so that
			// the replica's range holds numbers the master printed: on a
			// busy machine that takes longer than on a quiet one, so wait
			// for it (boundedly) rather than for a time. With replicas: 1
			// the master issues nothing once its replica is gone.
			time.Sleep(700 * time.Millisecond)
			mc := master.Client(t)
			for deadline := time.Now().Add(60 * time.Second); tc.replicas == 0; {
				cur, err := mc.HGet(context.Background(), "sn:{SN@<seq>}:range", "cur").Int64()
				if err == nil && cur > stale+50 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the master issued nothing past %d in 60 s (cur %d, %v);%s", stale, cur, err, f.summary())
				}
				time.Sleep(20 * time.Millisecond)
			}
			master.Kill(t)
			if tc.replicas > 0 {
				// The promoted server gets a replica of its own, which
				// replicas: 1 waits for from now on.
				redistest.StartReplica(t, replica)
			}
			f.rewrite(machineConfig(tc.backend, replica.Addr(), ledger, extra))
			f.progress(5000)
			total, repeats := f.repeats()
			if tc.forge {
				if repeats == 0 {
					t.Fatalf("a failover to a lagging replica whose range was forged gave no repeat in %d numbers; the test cannot tell;%s", total, f.summary())
				}
				t.Logf("%s: the lagging replica repeated %d of %d numbers, as expected", tc.name, repeats, total)
				return
			}
			if repeats != 0 {
				t.Fatalf("%d repeats in %d numbers;%s", repeats, total, f.summary())
			}
			t.Logf("%s: 4 machines, %d numbers through a failover to a replica that lagged, 0 repeats;%s", tc.name, total, f.summary())
		})
	}
}
