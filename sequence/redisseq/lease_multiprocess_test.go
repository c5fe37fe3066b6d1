//go:build linux

package redisseq_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
)

// leaseEnv carries the job of a child process of TestLeaserMultiProcess.
const leaseEnv = "REDISSEQ_TEST_LEASE_CHILD"

// leaseSpec is a lease child's job: lease a worker id of Layout from the
// Redis at Addr, issue ids for Run, appending them to Out as it goes (it
// may be killed at any moment), then Close.
type leaseSpec struct {
	Addr string
	Run  time.Duration
	TTL  time.Duration
	Out  string
	// Static, the control, gives every child worker id 1 instead of a
	// lease: the processes must then repeat ids.
	Static bool
}

// leaseLayout has four worker ids for six processes, so that ids pass from
// one process to another all the time.
var leaseLayout = snowflake.Layout{TimeBits: 45, WorkerBits: 2, SeqBits: 10, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

func runLeaseChild(js string) int {
	var s leaseSpec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintln(os.Stderr, "lease child: bad spec:", err)
		return 2
	}
	if err := leaseChild(s); err != nil {
		fmt.Fprintln(os.Stderr, "lease child:", err)
		if errors.Is(err, sequence.ErrLeaseLost) || errors.Is(err, sequence.ErrUnavailable) {
			// Stopped as it must, its lease lost or not renewed in time
			// (under load): the test counts it.
			return leaseLostExit
		}
		return 1
	}
	return 0
}

// leaseLostExit is the exit status of a child whose Gen stopped because
// its lease was lost or its renewals were late (under load): a stop, not
// a failure.
const leaseLostExit = 3

func leaseChild(s leaseSpec) error {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	ctx := context.Background()
	out, err := os.OpenFile(s.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	end := time.Now().Add(s.Run)
	var g *snowflake.Gen
	for g == nil {
		opts := snowflake.Options{Leaser: must(redisseq.NewLeaser(rdb, redisseq.LeaserOptions{})), TTL: s.TTL}
		if s.Static {
			opts = snowflake.Options{Worker: 1}
		}
		g, err = snowflake.New(ctx, leaseLayout, opts)
		if errors.Is(err, sequence.ErrUnavailable) {
			if time.Now().After(end) {
				return nil // every id stayed held for all its run: it issued nothing
			}
			time.Sleep(5 * time.Millisecond) // every id is held: wait for one to expire
			continue
		}
		if err != nil {
			return err
		}
	}
	buf := make([]byte, 0, 8*256)
	for time.Now().Before(end) {
		id, err := g.Next(ctx, "")
		if err != nil {
			out.Write(buf) // what it issued before it stopped
			return err
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(id))
		if len(buf) == cap(buf) {
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := out.Write(buf); err != nil {
		return err
	}
	return g.Close()
}

// Six processes share four worker ids leased from one Redis with a short
// TTL, for about four seconds; now and then one is killed with SIGKILL (its
// lease then expires and passes on) and a new one starts. Every id any of
// them wrote down is counted: none may repeat.
func TestLeaserMultiProcess(t *testing.T) {
	t.Run("leased", func(t *testing.T) { testLeaserMultiProcess(t, false) })
	t.Run("control: one fixed worker id", func(t *testing.T) { testLeaserMultiProcess(t, true) })
}

func testLeaserMultiProcess(t *testing.T, static bool) {
	srv := redistest.Start(t, redistest.Persistent())
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	const procs = 6
	start := func(i int) *exec.Cmd {
		js, _ := json.Marshal(leaseSpec{Addr: srv.Addr(), Run: time.Duration(500+r.IntN(1500)) * time.Millisecond, TTL: 200 * time.Millisecond, Out: filepath.Join(dir, fmt.Sprintf("child%03d.bin", i)), Static: static})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), leaseEnv+"="+string(js))
		cmd.Stderr = new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	type running struct {
		cmd  *exec.Cmd
		done chan error
	}
	var live []running
	launched, killed, lost := 0, 0, 0
	launch := func() {
		c := running{cmd: start(launched), done: make(chan error, 1)}
		launched++
		go func() { c.done <- c.cmd.Wait() }()
		live = append(live, c)
	}
	for range procs {
		launch()
	}
	run := 4 * time.Second
	if static {
		run = 500 * time.Millisecond
	}
	deadline := time.Now().Add(run)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(50+r.IntN(200)) * time.Millisecond)
		if r.IntN(2) == 0 {
			live[r.IntN(len(live))].cmd.Process.Signal(syscall.SIGKILL)
			killed++
		}
		kept := live[:0]
		for _, c := range live {
			select {
			case err := <-c.done:
				var exit *exec.ExitError
				switch {
				case err == nil:
				case errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled():
				case errors.As(err, &exit) && exit.ExitCode() == leaseLostExit:
					lost++
				default:
					t.Fatalf("a child failed: %v: %s", err, c.cmd.Stderr)
				}
			default:
				kept = append(kept, c)
			}
		}
		live = kept
		for len(live) < procs {
			launch()
		}
	}
	for _, c := range live {
		if err := <-c.done; err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if exit.ExitCode() == leaseLostExit {
				lost++
			}
		}
	}

	var ids []int64
	workers := map[int64]int{}
	for i := range launched {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("child%03d.bin", i)))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for j := 0; j+8 <= len(b); j += 8 { // a killed child may have written part of a record
			id := int64(binary.LittleEndian.Uint64(b[j:]))
			if j+8 > len(b)-len(b)%8 {
				break
			}
			ids = append(ids, id)
			d, _ := leaseLayout.Decompose(id)
			workers[d.Worker]++
		}
	}
	slices.Sort(ids)
	repeats := 0
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			repeats++
		}
	}
	switch {
	case static && repeats == 0:
		t.Errorf("the control (every process on worker 1) repeated nothing in %d ids: the test cannot see repeats", len(ids))
	case !static && repeats != 0:
		t.Errorf("%d ids of %d repeated", repeats, len(ids))
	}
	if !static && (len(ids) < 10_000 || len(workers) != 4) {
		t.Errorf("%d ids over workers %v: the processes hardly issued", len(ids), workers)
	}
	t.Logf("%d processes (%d killed with SIGKILL, %d stopped on a lost lease), %d ids over workers %v, %d repeats", launched, killed, lost, len(ids), workers, repeats)
}
