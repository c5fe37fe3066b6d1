package etcdseq_test

import (
	"bytes"
	"context"
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

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
)

// The fault tests run OS processes, each a machine issuing numbers from a
// Segment over the etcd ledger, while the test breaks the cluster under
// them. A child finds its job in this environment variable.
const childEnv = "ETCDSEQ_TEST_CHILD"

// childSpec is a child's job: issue numbers of Key from Goroutines
// goroutines until the file Stop exists (or Max numbers each), then write
// a childResult to Out.
type childSpec struct {
	Endpoints  []string
	Prefix     string
	Key        string
	Goroutines int
	Step       int64
	Max        int
	Stop, Out  string
}

// childResult is what a child issued, and how many calls failed because
// the cluster could not serve (a majority down).
type childResult struct {
	Numbers     []int64
	Unavailable int
}

func runChild(spec string) int {
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "child: bad spec:", err)
		return 2
	}
	if err := child(s); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func child(s childSpec) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	store, err := etcdseq.New(cli, etcdseq.Options{Prefix: s.Prefix, AttemptTimeout: 500 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		return err
	}
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{Step: s.Step, MinStep: s.Step, MaxStep: s.Step})
	if err != nil {
		return err
	}
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
			if _, err := os.Stat(s.Stop); err == nil {
				stop.Store(true)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	var res childResult
	errs := make([]error, s.Goroutines)
	var wg sync.WaitGroup
	for w := range s.Goroutines {
		wg.Go(func() {
			ctx := context.Background()
			var mine []int64
			unavailable := 0
			for len(mine) < s.Max && !stop.Load() {
				n, err := seg.Next(ctx, s.Key)
				switch {
				case errors.Is(err, sequence.ErrUnavailable):
					unavailable++
					time.Sleep(20 * time.Millisecond)
					continue
				case err != nil:
					errs[w] = err
					stop.Store(true)
				default:
					mine = append(mine, n)
				}
			}
			mu.Lock()
			res.Numbers = append(res.Numbers, mine...)
			res.Unavailable += unavailable
			mu.Unlock()
		})
	}
	wg.Wait()
	stop.Store(true)
	seg.Close()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(s.Out, b, 0o644)
}

// machines is a set of children issuing numbers until stopped.
type machines struct {
	t    *testing.T
	dir  string
	cmds []*exec.Cmd
	outs []string
	done chan error
}

// startMachines starts procs children issuing key of the store at prefix.
func startMachines(t *testing.T, c *etcdtest.Cluster, prefix, key string, procs int) *machines {
	t.Helper()
	m := &machines{t: t, dir: t.TempDir(), done: make(chan error, procs)}
	for p := range procs {
		spec := childSpec{
			Endpoints: c.Endpoints(), Prefix: prefix, Key: key,
			Goroutines: 4, Step: 20, Max: 200_000,
			Stop: filepath.Join(m.dir, "stop"),
			Out:  filepath.Join(m.dir, fmt.Sprintf("child%d.json", p)),
		}
		js, _ := json.Marshal(spec)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(js))
		m.cmds = append(m.cmds, cmd)
		m.outs = append(m.outs, spec.Out)
	}
	for p, cmd := range m.cmds {
		// Started here, not in the goroutine, so that Cleanup reads
		// cmd.Process after it is set.
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("child %d: %v", p, err)
		}
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("child %d: %v\n%s", p, err, out.Bytes())
			}
			m.done <- err
		}()
	}
	t.Cleanup(func() {
		for _, cmd := range m.cmds {
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		}
	})
	return m
}

// stop tells the children to stop, waits for them, and returns every
// number they issued and how many calls failed as unavailable.
func (m *machines) stop() (nums []int64, unavailable int) {
	m.t.Helper()
	if err := os.WriteFile(filepath.Join(m.dir, "stop"), nil, 0o644); err != nil {
		m.t.Fatal(err)
	}
	timeout := time.After(2 * time.Minute)
	for range m.cmds {
		select {
		case err := <-m.done:
			if err != nil {
				m.t.Fatal(err)
			}
		case <-timeout:
			m.t.Fatal("the children did not stop within 2 minutes")
		}
	}
	for _, out := range m.outs {
		b, err := os.ReadFile(out)
		if err != nil {
			m.t.Fatal(err)
		}
		var r childResult
		if err := json.Unmarshal(b, &r); err != nil {
			m.t.Fatal(err)
		}
		nums = append(nums, r.Numbers...)
		unavailable += r.Unavailable
	}
	return nums, unavailable
}

// repeats counts the numbers issued more than once.
func repeats(nums []int64) int {
	s := slices.Clone(nums)
	slices.Sort(s)
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			n++
		}
	}
	return n
}

// mustAllocate allocates through a store of the test's own, failing the
// test if the cluster does not serve within three of the store's
// Timeouts: an election on a busy machine may take longer than one.
func mustAllocate(t *testing.T, s *etcdseq.Store, what string) {
	t.Helper()
	var err error
	for range 3 {
		if _, err = s.Allocate(t.Context(), "probe", 1); err == nil {
			return
		}
	}
	t.Fatalf("%s: Allocate, three times: %v", what, err)
}

// Four processes issue numbers while the cluster suffers what clusters
// suffer: the leader killed and restarted, a member paused past the
// election timeout, a member's disk lost and the member replaced, a
// minority down (issuing goes on), a majority down (calls fail as
// unavailable within the store's Timeout, and work again once it is
// back). No number is issued twice.
func TestFaults(t *testing.T) {
	c := etcdtest.Start(t)
	prefix := "faults/"
	probe, err := etcdseq.New(c.Client(t), etcdseq.Options{Prefix: prefix, AttemptTimeout: 500 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m := startMachines(t, c, prefix, "orders", 4)
	settle := func() { time.Sleep(time.Second) } // let the machines issue in each state

	settle()
	leader := c.Leader(t)
	leader.Kill(t)
	t.Logf("killed the leader %s", leader.Name)
	settle()
	mustAllocate(t, probe, "the leader killed")
	leader.Restart(t)
	c.WaitHealthy(t)

	paused := c.Leader(t)
	paused.Pause(t)
	t.Logf("paused the leader %s past the election timeout", paused.Name)
	time.Sleep(1500 * time.Millisecond)
	mustAllocate(t, probe, "the leader paused")
	paused.Resume(t)
	c.WaitHealthy(t)

	wiped := c.Members[2]
	c.Replace(t, wiped)
	t.Logf("replaced %s by an empty member", wiped.Name)
	settle()

	down := c.Members[0]
	down.Stop(t)
	settle()
	mustAllocate(t, probe, "a minority down")
	down.Restart(t)
	c.WaitHealthy(t)

	c.Members[0].Stop(t)
	c.Members[1].Stop(t)
	start := time.Now()
	_, err = probe.Allocate(t.Context(), "probe", 1)
	took := time.Since(start)
	if !errors.Is(err, sequence.ErrUnavailable) || took > 4*time.Second {
		t.Errorf("Allocate with a majority down: %v after %v; want ErrUnavailable within the Timeout (2s)", err, took)
	}
	t.Logf("a majority down: %v after %v", err, took.Round(time.Millisecond))
	settle()
	c.Members[0].Restart(t)
	c.Members[1].Restart(t)
	c.WaitHealthy(t)
	mustAllocate(t, probe, "the majority back")
	settle()

	nums, unavailable := m.stop()
	t.Logf("%d numbers issued by 4 processes; %d calls failed as unavailable while a majority was down; repeats: %d", len(nums), unavailable, repeats(nums))
	if r := repeats(nums); r != 0 {
		t.Errorf("%d numbers issued twice", r)
	}
	if unavailable == 0 {
		t.Error("no call failed while a majority was down: the test did not reach the machines")
	}
	if len(nums) < 1000 {
		t.Errorf("only %d numbers issued", len(nums))
	}
}

// The control: the same machines over a ledger that loses its data (what
// a cluster restored from an old snapshot, or every member's disk lost,
// does) repeat numbers once they restart, and the test sees them. (While
// they run, each Segment refuses the ledger that went backwards: it has
// seen higher numbers. A restarted one has not.)
func TestFaultsControl(t *testing.T) {
	c := etcdtest.Start(t)
	prefix := "control/"
	run := func() []int64 {
		m := startMachines(t, c, prefix, "orders", 4)
		time.Sleep(time.Second)
		nums, _ := m.stop()
		return nums
	}
	before := run()
	cli := c.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := cli.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	after := run()
	r := repeats(append(before, after...))
	t.Logf("control: %d numbers before the ledger lost its data, %d after, %d repeats", len(before), len(after), r)
	if r == 0 {
		t.Fatal("a ledger that lost its data repeated nothing: the test cannot see a repeat")
	}
}
