package recordtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// childEnv carries the job of a child process.
const childEnv = "RECORDTEST_CHILD"

// job is what a child does: add to Key, in the store at Where, N times or
// until killed, writing each value it was given to Out as it goes. Blind,
// the control, reads and then writes without a condition: processes then
// lose each other's updates and see values twice.
type job struct {
	Where, Key, Out string
	N               int
	Blind           bool
}

// Main runs this process as a child of the process tests when the
// environment says so, and returns otherwise. Call it first in TestMain,
// with the Open given to [Run].
func Main(open Open) {
	js := os.Getenv(childEnv)
	if js == "" {
		return
	}
	var j job
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		fmt.Fprintln(os.Stderr, "recordtest child:", err)
		os.Exit(2)
	}
	if err := child(open, j); err != nil {
		fmt.Fprintln(os.Stderr, "recordtest child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func child(open Open, j job) error {
	s, closeFn, err := open(j.Where)
	if err != nil {
		return err
	}
	defer closeFn()
	f, err := os.OpenFile(j.Out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx := context.Background()
	for range j.N {
		var n int64
		if j.Blind {
			n, err = blindAdd(ctx, s, j.Key)
		} else {
			n, err = add(ctx, s, j.Key)
		}
		if err != nil {
			return err
		}
		// One write per value: a child killed after it lost nothing it
		// was given.
		if _, err := f.WriteString(strconv.FormatInt(n, 10) + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// blindAdd is add without its condition: the control.
func blindAdd(ctx context.Context, s record.Store, key string) (int64, error) {
	rs, err := s.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	var n int64
	if rs[0].Exists() {
		n, _ = strconv.ParseInt(string(rs[0].Value), 10, 64)
	}
	n++
	_, err = s.Commit(ctx, nil, []record.Op{record.Put(key, []byte(strconv.FormatInt(n, 10)))})
	return n, err
}

// testProcesses has six processes add to one record, two of them killed
// with SIGKILL midway and started again, and counts the values given
// twice: none, beside a control of blind writes that repeats.
func testProcesses(t *testing.T, where, prefix string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(blind bool, key string) (values, repeats int) {
		dir := t.TempDir()
		const procs, each = 6, 60
		start := func(i, gen int) *exec.Cmd {
			j := job{Where: where, Key: prefix + key, N: each, Blind: blind,
				Out: filepath.Join(dir, fmt.Sprintf("out%d.%d", i, gen))}
			js, _ := json.Marshal(j)
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+string(js))
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			return cmd
		}
		cmds := make([]*exec.Cmd, procs)
		for i := range cmds {
			cmds[i] = start(i, 0)
		}
		// Kill two midway, once each has written something, and start
		// them again: a stale restart over what the others wrote since.
		for _, i := range []int{0, 1} {
			out := filepath.Join(dir, fmt.Sprintf("out%d.0", i))
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
					break
				}
			}
			cmds[i].Process.Signal(syscall.SIGKILL)
			cmds[i].Wait()
			cmds[i] = start(i, 1)
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("child %d: %v", i, err)
			}
		}
		seen := map[int64]bool{}
		files, _ := filepath.Glob(filepath.Join(dir, "out*"))
		for _, name := range files {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				n, err := strconv.ParseInt(sc.Text(), 10, 64)
				if err != nil {
					continue // the last line of a killed child
				}
				values++
				if seen[n] {
					repeats++
				}
				seen[n] = true
			}
			f.Close()
		}
		return values, repeats
	}
	values, repeats := run(false, "n")
	t.Logf("six processes, two killed and restarted: %d values, %d given twice", values, repeats)
	if repeats != 0 {
		t.Errorf("%d values given twice", repeats)
	}
	for try := 1; ; try++ {
		v, r := run(true, fmt.Sprintf("control%d", try))
		t.Logf("control (blind writes), try %d: %d values, %d given twice", try, v, r)
		if r > 0 {
			break
		}
		if try == 5 {
			t.Fatal("the control of blind writes repeated no value in 5 tries: this test cannot tell a store that keeps its conditions from one that does not")
		}
	}
}
