//go:build linux

package redisseq_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// The multi-process tests re-execute the test binary. A child finds its job
// in this environment variable, runs it from TestMain, writes what it got
// to a file, and exits without running any test.
const childEnv = "REDISSEQ_TEST_CHILD"

// childSpec is a child's job.
type childSpec struct {
	Mode       string // "segment" or "counter"
	Addr       string // the Redis both modes issue from
	Durable    string // counter mode: the Redis holding the durable allocator
	Key        string
	Goroutines int
	PerWorker  int
	Out        string // output file: one record per number
}

// record is one number with the times its call started and returned, on
// the system-wide monotonic clock (counter mode only; segment mode writes
// zeros).
type record struct {
	Start, End, N int64
	Worker        int64 // process*1000 + goroutine
}

// monotonic reads CLOCK_MONOTONIC, which, unlike Go's monotonic readings,
// is one clock for every process on the machine.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// runChild does the job in spec and returns the exit code.
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
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	var g sequence.Gen
	switch s.Mode {
	case "segment":
		seg := must(sequence.NewSegment(must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{})), sequence.SegmentOptions{Step: 1000, MaxStep: 1000}))
		defer seg.Close()
		g = seg
	case "counter":
		durable := redis.NewClient(&redis.Options{Addr: s.Durable})
		defer durable.Close()
		g = must(redisseq.NewCounter(rdb, must(redisseq.NewRedisOnlyAllocator(durable, redisseq.AllocatorOptions{})), redisseq.CounterOptions{Step: 100}))
	default:
		return fmt.Errorf("unknown mode %q", s.Mode)
	}
	out := make([][]record, s.Goroutines)
	errs := make([]error, s.Goroutines)
	var wg sync.WaitGroup
	for w := range s.Goroutines {
		wg.Go(func() {
			ctx := context.Background()
			recs := make([]record, 0, s.PerWorker)
			for range s.PerWorker {
				var r record
				if s.Mode == "counter" {
					r.Start = monotonic()
				}
				n, err := g.Next(ctx, s.Key)
				if err != nil {
					errs[w] = err
					break
				}
				if s.Mode == "counter" {
					r.End = monotonic()
				}
				r.N, r.Worker = n, int64(os.Getpid())*1000+int64(w)
				recs = append(recs, r)
			}
			out[w] = recs
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	buf := make([]byte, 0, s.Goroutines*s.PerWorker*32)
	for _, recs := range out {
		for _, r := range recs {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Start))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(r.End))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(r.N))
			buf = binary.LittleEndian.AppendUint64(buf, uint64(r.Worker))
		}
	}
	return os.WriteFile(s.Out, buf, 0o644)
}

// runChildren runs procs children of spec at once and returns all their
// records.
func runChildren(t *testing.T, procs int, spec childSpec) []record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		s := spec
		s.Out = filepath.Join(dir, fmt.Sprintf("child%d.bin", p))
		js, _ := json.Marshal(s)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(js))
		cmds[p] = cmd
	}
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p, cmd := range cmds {
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[p] = fmt.Errorf("child %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var all []record
	for p := range procs {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("child%d.bin", p)))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != spec.Goroutines*spec.PerWorker*32 {
			t.Fatalf("child %d wrote %d bytes, want %d records", p, len(b), spec.Goroutines*spec.PerWorker)
		}
		for i := 0; i < len(b); i += 32 {
			all = append(all, record{
				Start:  int64(binary.LittleEndian.Uint64(b[i:])),
				End:    int64(binary.LittleEndian.Uint64(b[i+8:])),
				N:      int64(binary.LittleEndian.Uint64(b[i+16:])),
				Worker: int64(binary.LittleEndian.Uint64(b[i+24:])),
			})
		}
	}
	return all
}

// checkUnique fails t if a number is repeated or not positive.
func checkUnique(t *testing.T, recs []record) {
	t.Helper()
	nums := make([]int64, len(recs))
	for i, r := range recs {
		nums[i] = r.N
	}
	slices.Sort(nums)
	repeats := 0
	for i, n := range nums {
		if n < 1 {
			t.Fatalf("number %d is not positive", n)
		}
		if i > 0 && n == nums[i-1] {
			repeats++
		}
	}
	if repeats > 0 {
		t.Fatalf("%d numbers of %d repeated", repeats, len(nums))
	}
}

// checkIncreasingPerWorker fails t unless each goroutine's numbers, in the
// order it got them, strictly increase.
func checkIncreasingPerWorker(t *testing.T, recs []record) {
	t.Helper()
	last := map[int64]int64{}
	for _, r := range recs { // a child writes each goroutine's records in order
		if prev, ok := last[r.Worker]; ok && r.N <= prev {
			t.Fatalf("worker %d got %d after %d", r.Worker, r.N, prev)
		}
		last[r.Worker] = r.N
	}
}

// 4 processes x 4 goroutines share one Redis through Segment+Allocator:
// a million numbers, none repeated.
func TestMultiProcessSegment(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	const procs = 4
	spec := childSpec{Mode: "segment", Addr: srv.Addr(), Key: "mp", Goroutines: 4, PerWorker: 62_500}
	recs := runChildren(t, procs, spec)
	if len(recs) != 1_000_000 {
		t.Fatalf("got %d numbers, want 1000000", len(recs))
	}
	checkUnique(t, recs)
	checkIncreasingPerWorker(t, recs)
}

// 4 processes x 4 goroutines share one Redis through the strict Counter,
// over a durable allocator in a second Redis. Besides uniqueness, the test
// checks first come, first served across processes:
//
// Every call is stamped with CLOCK_MONOTONIC (one clock for all processes)
// just before Next is called and just after it returns. If call A's end
// stamp is below call B's start stamp, A's script ran in Redis before B's,
// and since the range's cur only ever rises, B's number must be larger.
// Calls that overlap in time may come out in either order, so they are not
// compared. The check sorts the calls by start, sweeps the calls by end
// alongside, and requires each number to exceed the largest number of all
// calls that ended before it started.
func TestMultiProcessCounter(t *testing.T) {
	srv := redistest.Start(t)
	durable := redistest.Start(t, redistest.Persistent())
	const procs = 4
	spec := childSpec{Mode: "counter", Addr: srv.Addr(), Durable: durable.Addr(), Key: "mpc", Goroutines: 4, PerWorker: 2500}
	recs := runChildren(t, procs, spec)
	if len(recs) != procs*4*2500 {
		t.Fatalf("got %d numbers, want %d", len(recs), procs*4*2500)
	}
	checkUnique(t, recs)
	checkIncreasingPerWorker(t, recs)
	checkFirstComeFirstServed(t, recs)
}

func checkFirstComeFirstServed(t *testing.T, recs []record) {
	t.Helper()
	compared, err := firstComeFirstServed(recs)
	if err != nil {
		t.Fatal(err)
	}
	if compared < len(recs)/2 {
		t.Fatalf("only %d of %d calls had an earlier call to compare with", compared, len(recs))
	}
	t.Logf("%d calls checked against every call that returned before they started", compared)
}

// firstComeFirstServed returns an error naming two calls that were served
// out of order, and how many calls had an earlier one to compare with.
func firstComeFirstServed(recs []record) (compared int, err error) {
	byStart := slices.Clone(recs)
	slices.SortFunc(byStart, func(a, b record) int { return cmpInt(a.Start, b.Start) })
	byEnd := slices.Clone(recs)
	slices.SortFunc(byEnd, func(a, b record) int { return cmpInt(a.End, b.End) })
	var maxEnded record
	j := 0
	for _, r := range byStart {
		for j < len(byEnd) && byEnd[j].End < r.Start {
			if byEnd[j].N > maxEnded.N {
				maxEnded = byEnd[j]
			}
			j++
		}
		if j > 0 {
			compared++
			if r.N <= maxEnded.N {
				return compared, fmt.Errorf("worker %d got %d in a call that started at %d, after worker %d's call that got %d had returned at %d",
					r.Worker, r.N, r.Start, maxEnded.Worker, maxEnded.N, maxEnded.End)
			}
		}
	}
	return compared, nil
}

// The order check finds calls served out of order and only those.
func TestFirstComeFirstServedCheck(t *testing.T) {
	tests := []struct {
		name string
		recs []record // Start, End, N, Worker
		ok   bool
	}{
		{"in order", []record{{0, 10, 1, 1}, {11, 20, 2, 2}, {21, 30, 3, 1}}, true},
		{"overlapping calls in either order", []record{{0, 10, 2, 1}, {5, 15, 1, 2}, {16, 20, 3, 1}}, true},
		{"later call got a smaller number", []record{{0, 10, 2, 1}, {11, 20, 1, 2}}, false},
		{"smaller than an earlier call that is not the last to end", []record{{0, 5, 9, 1}, {1, 30, 10, 2}, {6, 8, 5, 3}}, false},
		{"equal numbers", []record{{0, 10, 4, 1}, {11, 20, 4, 2}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := firstComeFirstServed(tt.recs)
			if (err == nil) != tt.ok {
				t.Fatalf("firstComeFirstServed(%v) = %v, want ok=%v", tt.recs, err, tt.ok)
			}
		})
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
