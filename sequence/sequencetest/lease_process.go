package sequencetest

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

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// OpenLeaser opens, in this process, a Leaser of the store that where
// names, and returns it with what closes it.
type OpenLeaser func(where string) (snowflake.Leaser, func(), error)

// leaseEnv carries the job of a child process of RunLeaserProcesses.
const leaseEnv = "SEQUENCETEST_LEASE_CHILD"

// leaseJob is a child's job: lease a worker id of processLayout from the
// store at Where, issue ids for Run, appending them to Out as it goes (it
// may be killed at any moment), then Close. Static, the control, gives
// every child worker id 1 instead of a lease: the processes must then
// repeat ids.
type leaseJob struct {
	Where  string
	Run    time.Duration
	TTL    time.Duration
	Out    string
	Static bool
}

// processLayout has four worker ids for six processes, so that ids pass from
// one process to another all the time.
var processLayout = snowflake.Layout{TimeBits: 45, WorkerBits: 2, SeqBits: 10, Epoch: snowflake.Twitter.Epoch, Unit: time.Millisecond}

// leaseLostExit is the exit status of a child whose Gen stopped because
// its lease was lost or its renewals were late (under load): a stop, not
// a failure.
const leaseLostExit = 3

// LeaserMain runs this process as a child of [RunLeaserProcesses] when the
// environment says so, and returns otherwise. Call it first in TestMain,
// with how a child opens the Leaser.
func LeaserMain(open OpenLeaser) {
	js := os.Getenv(leaseEnv)
	if js == "" {
		return
	}
	var j leaseJob
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		fmt.Fprintln(os.Stderr, "lease child: bad job:", err)
		os.Exit(2)
	}
	if err := leaseChild(open, j); err != nil {
		fmt.Fprintln(os.Stderr, "lease child:", err)
		if errors.Is(err, sequence.ErrLeaseLost) || errors.Is(err, sequence.ErrUnavailable) {
			os.Exit(leaseLostExit) // stopped as it must: the parent counts it
		}
		os.Exit(1)
	}
	os.Exit(0)
}

func leaseChild(open OpenLeaser, j leaseJob) error {
	l, closeFn, err := open(j.Where)
	if err != nil {
		return err
	}
	defer closeFn()
	ctx := context.Background()
	out, err := os.OpenFile(j.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	end := time.Now().Add(j.Run)
	var g *snowflake.Gen
	for g == nil {
		opts := snowflake.Options{Leaser: l, TTL: j.TTL}
		if j.Static {
			opts = snowflake.Options{Worker: 1}
		}
		g, err = snowflake.New(ctx, processLayout, opts)
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
			// Paced, so that the parent has a few million ids to sort,
			// not tens: renewals and takeovers still happen every few
			// bursts.
			time.Sleep(2 * time.Millisecond)
		}
	}
	if _, err := out.Write(buf); err != nil {
		return err
	}
	return g.Close()
}

// RunLeaserProcesses has six processes share four worker ids leased from
// the store at where with a short ttl, for a few seconds; now and then
// one is killed with SIGKILL (its lease then expires and passes on) and a
// new one starts. Every id any of them wrote down is counted: none may
// repeat. ttl is the leases' (the shortest the store keeps). The control gives them all one fixed worker id: they must
// repeat. The package's TestMain calls [LeaserMain].
func RunLeaserProcesses(t *testing.T, where string, ttl time.Duration) {
	t.Run("leased", func(t *testing.T) { leaserProcesses(t, where, ttl, false) })
	t.Run("control: one fixed worker id", func(t *testing.T) { leaserProcesses(t, where, ttl, true) })
}

func leaserProcesses(t *testing.T, where string, ttl time.Duration, static bool) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	const procs = 6
	start := func(i int) *exec.Cmd {
		js, _ := json.Marshal(leaseJob{Where: where,
			Run: time.Duration(300+r.IntN(900)) * time.Millisecond, TTL: ttl,
			Out: filepath.Join(dir, fmt.Sprintf("child%03d.bin", i)), Static: static})
		cmd := exec.Command(exe, "-test.run=^$")
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
	run := 2500 * time.Millisecond
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
			switch {
			case exit.ProcessState.Sys().(syscall.WaitStatus).Signaled(): // killed in the last round
			case exit.ExitCode() == leaseLostExit:
				lost++
			default:
				t.Fatalf("a child failed: %v: %s", err, c.cmd.Stderr)
			}
		}
	}

	var ids []int64
	workers := map[int64]int{}
	for i := range launched {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("child%03d.bin", i)))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		data = data[:len(data)-len(data)%8] // a killed child may have written part of a record
		for j := 0; j+8 <= len(data); j += 8 {
			id := int64(binary.LittleEndian.Uint64(data[j:]))
			ids = append(ids, id)
			d, _ := processLayout.Decompose(id)
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
