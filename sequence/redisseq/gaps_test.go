//go:build linux

package redisseq_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// runStreamChild issues numbers from a Segment over Redis in front of the
// ledger, with 2 goroutines, until the stop file appears, writing each
// number to s.Out as it is issued (what a process prints), and its name
// in the journals to s.Out+".by"; then it closes the Segment.
func runStreamChild(s ledgerSpec, rdb *redis.Client, ledger *sqlseq.Store) int {
	if err := os.WriteFile(s.Out+".by", []byte(journal.ProcessName()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	f, err := os.Create(s.Out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer f.Close()
	seg := must(sequence.NewSegment(must(redisseq.NewAllocator(rdb, ledger, redisseq.AllocatorOptions{Chunk: 500})), sequence.SegmentOptions{Step: 50, MinStep: 50, MaxStep: 50}))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				if _, err := os.Stat(s.Stop); err == nil {
					return
				}
				n, err := seg.Next(context.Background(), "orders")
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				f.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := seg.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "child: close:", err)
		return 1
	}
	if st := seg.Stats(); st.NotesLost > 0 {
		fmt.Fprintf(os.Stderr, "child: %d journal records lost\n", st.NotesLost)
	}
	return 0
}

// TestGapsOverRedis: three OS processes issue numbers from Segments over
// Redis in front of a PostgreSQL ledger; one is killed (SIGKILL), the
// others close. The ledger's journal, read through an Allocator, names
// the process that holds each block Redis handed out: every number the
// closed processes printed is issued (or open naming that process, when
// a fetch of its failed while the killed one held the refill lock, so it
// could not close the key), and every number issued was printed; the
// killed process's last blocks are open and name it, and hold what it
// printed there (its blocks before those were used up, and are issued);
// the rest is unused or open with the cache. The control: the
// same journal without the records of whom the cache handed blocks to
// (as the release before kept it) counts numbers as issued that nobody
// printed, and names no process.
func TestGapsOverRedis(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	pg := pgtest.Shared(t)
	dsn := pg.NewDatabase(t)
	ledger := must(sqlseq.New(pg.DB(t, dsn), sqlseq.Postgres, sqlseq.Options{}))
	if err := ledger.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	const procs = 3
	cmds := make([]*exec.Cmd, procs)
	outs := make([]string, procs)
	var wg sync.WaitGroup
	logs := make([]*strings.Builder, procs)
	for p := range procs {
		outs[p] = filepath.Join(dir, fmt.Sprintf("child%d.bin", p))
		js, _ := json.Marshal(ledgerSpec{Mode: "stream", Redis: srv.Addr(), Ledger: dsn, Stop: stop, Out: outs[p]})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), ledgerEnv+"="+string(js))
		logs[p] = new(strings.Builder)
		cmd.Stdout, cmd.Stderr = logs[p], logs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
		wg.Go(func() { cmd.Wait() })
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// Going, and the process to kill has printed numbers (on a busy
		// machine it may start last).
		fi, err := os.Stat(outs[0])
		if last, _ := ledger.Last(ctx, "orders"); last >= 6000 && err == nil && fi.Size() >= 8*50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the processes did not get going")
		}
	}
	cmds[0].Process.Kill()
	time.Sleep(300 * time.Millisecond)
	os.WriteFile(stop, nil, 0o644)
	wg.Wait()
	for p := 1; p < procs; p++ {
		if code := cmds[p].ProcessState.ExitCode(); code != 0 {
			t.Fatalf("child %d: exit %d\n%s", p, code, logs[p])
		}
	}
	printed := make([]map[int64]bool, procs)
	names := make([]string, procs)
	total := 0
	for p := range procs {
		b, err := os.ReadFile(outs[p])
		if err != nil {
			t.Fatal(err)
		}
		printed[p] = map[int64]bool{}
		for i := 0; i+8 <= len(b); i += 8 {
			n := int64(binary.LittleEndian.Uint64(b[i:]))
			if printed[p][n] {
				t.Fatalf("child %d printed %d twice", p, n)
			}
			printed[p][n] = true
		}
		total += len(printed[p])
		nb, _ := os.ReadFile(outs[p] + ".by")
		names[p] = string(nb)
	}

	reader := must(redisseq.NewAllocator(srv.Client(t), ledger, redisseq.AllocatorOptions{Chunk: 500}))
	events, head, err := journal.ReadJournal(ctx, journal.Of(reader), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := journal.VerifyChain("orders", events, head); err != nil {
		t.Fatal(err)
	}
	rep := journal.Audit("orders", events, head, time.Now())
	count := map[journal.State]int64{}
	var wrong []string
	for _, sp := range rep.Spans {
		count[sp.State] += sp.Range.Len()
		for n := sp.Range.First; n <= sp.Range.Last; n++ {
			byClosed := printed[1][n] || printed[2][n]
			switch {
			case sp.State == journal.Issued && !byClosed && !printed[0][n]:
				wrong = append(wrong, fmt.Sprintf("%d issued, and printed by no process (%s)", n, sp.Cause()))
			case sp.State != journal.Issued && byClosed && !(sp.State == journal.Open && (printed[1][n] && strings.Contains(sp.Cause(), names[1]) || printed[2][n] && strings.Contains(sp.Cause(), names[2]))):
				// Open and naming its process is honest too: a process
				// whose fetch failed (the killed one held the refill lock)
				// cannot say its blocks are settled, and writes no Closed.
				wrong = append(wrong, fmt.Sprintf("%d printed by a closed process, and %s (%s)", n, sp.State, sp.Cause()))
			case printed[0][n] && sp.State != journal.Issued && (sp.State != journal.Open || !strings.Contains(sp.Cause(), names[0])):
				wrong = append(wrong, fmt.Sprintf("%d printed by the killed process, and %s (%s)", n, sp.State, sp.Cause()))
			}
			if len(wrong) > 10 {
				break
			}
		}
	}
	t.Logf("%d numbers printed (%d by the killed process); the journal: %v; problems %v", total, len(printed[0]), count, rep.Problems)
	for _, w := range wrong {
		t.Error(w)
	}
	if len(wrong) > 0 {
		for p := range procs {
			t.Logf("child %d: %s", p, logs[p])
		}
		for _, e := range events {
			if e.Kind != journal.Handed || e.Seq > int64(len(events))-8 {
				t.Logf("%v (actor %s)", e, e.Actor)
			}
		}
	}
	if count[journal.Issued] > int64(total) {
		t.Errorf("%d issued, and all the processes printed %d", count[journal.Issued], total)
	}
	killedOpen := false
	for _, sp := range rep.Spans {
		if sp.State == journal.Open && strings.Contains(sp.Cause(), names[0]) {
			killedOpen = true
		}
	}
	if !killedOpen || len(printed[0]) == 0 {
		t.Errorf("no open block names the killed process %q (it printed %d)", names[0], len(printed[0]))
	}

	// The control: the journal as the release before kept it.
	var old []journal.Event
	for _, e := range events {
		switch e.Kind {
		case journal.Handed:
			continue
		case journal.Cached:
			e.Kind = journal.Reserved
		}
		old = append(old, e)
	}
	ctl := journal.Audit("orders", old, head, time.Now())
	var issued int64
	named := false
	for _, sp := range ctl.Spans {
		if sp.State == journal.Issued {
			issued += sp.Range.Len()
		}
		if strings.Contains(sp.Cause(), names[0]) {
			named = true
		}
	}
	t.Logf("control: %d issued, against %d printed by the closed processes; the killed process named: %v", issued, len(printed[1])+len(printed[2]), named)
	if issued <= int64(total) && named {
		t.Error("control: the journal without the cache's records is exact too: the test cannot see the fault")
	}
	if !slices.ContainsFunc(events, func(e journal.Event) bool { return e.Kind == journal.Handed }) {
		t.Error("no handed record in the journal")
	}
}
