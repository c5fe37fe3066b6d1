package sqliteseq_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/sqliteseq"
)

// allocEnv carries the file of a child of TestProcessesKilled; "memory"
// for the control's children, which count in memory.
const allocEnv = "SQLITESEQ_TEST_ALLOC_CHILD"

// allocChild issues numbers of one key through a Segment over the file
// at path, writing each to stdout as it is issued, until it is killed.
func allocChild(path string) int {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // a small step warns: stderr is for errors
	var a sequence.Allocator = sequence.NewMemoryAllocator()
	if path != "memory" {
		s, err := sqliteseq.Open(path, sqliteseq.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		a = s
	}
	seg, err := sequence.NewSegment(a, sequence.SegmentOptions{Step: 7, MaxStep: 7})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	for {
		n, err := seg.Next(context.Background(), "orders")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		out.WriteString(strconv.FormatInt(n, 10) + "\n")
		out.Flush() // issued: the parent sees it before a kill can
	}
}

// Processes that share one file, killed with SIGKILL while they issue
// and started again, four at a time over ten rounds: no number is issued
// twice. The control, processes that count in memory, repeats.
func TestProcessesKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sn.db")
	s := must(sqliteseq.Open(path, sqliteseq.Options{}))
	s.Close()
	for _, tc := range []struct{ name, where string }{{"file", path}, {"control", "memory"}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int64]int{}
			repeats, issued := 0, 0
			for round := range 10 {
				var wg sync.WaitGroup
				for c := range 4 {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), allocEnv+"="+tc.where)
					stdout, err := cmd.StdoutPipe()
					if err != nil {
						t.Fatal(err)
					}
					cmd.Stderr = new(strings.Builder)
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					who := round*4 + c
					first := make(chan struct{})
					wg.Go(func() {
						sc := bufio.NewScanner(stdout)
						for i := 0; sc.Scan(); i++ {
							if i == 0 {
								close(first)
							}
							n, err := strconv.ParseInt(sc.Text(), 10, 64)
							if err != nil {
								continue // a line cut by the kill
							}
							mu.Lock()
							if w, ok := seen[n]; ok && w != who {
								repeats++
							}
							seen[n] = who
							issued++
							mu.Unlock()
						}
					})
					wg.Go(func() {
						// Killed a while after its first number, or
						// if it has none in 20s.
						select {
						case <-first:
						case <-time.After(20 * time.Second):
						}
						time.Sleep(time.Duration(50+37*c) * time.Millisecond)
						cmd.Process.Signal(syscall.SIGKILL)
						cmd.Wait()
						if msg := cmd.Stderr.(*strings.Builder).String(); msg != "" {
							t.Errorf("child %d: %s", who, msg)
						}
					})
				}
				wg.Wait()
			}
			t.Logf("40 processes killed with SIGKILL, %d numbers issued, %d repeats", issued, repeats)
			switch {
			case issued < 400:
				t.Errorf("only %d numbers issued: the test cannot tell", issued)
			case tc.where == "memory" && repeats == 0:
				t.Error("control: no number repeated; the test cannot see a repeat")
			case tc.where != "memory" && repeats != 0:
				t.Errorf("%d numbers issued twice", repeats)
			}
		})
	}
}
