//go:build linux

package sqlseq_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/sequence/sqlseq"
)

// journalEnv carries the job of a child process of TestJournalFaults.
const journalEnv = "SQLSEQ_TEST_JOURNAL_CHILD"

// journalSpec is a journal child's job: draw numbers of Key through a
// Segment over the ledger at DSN for Run, writing each to Out as it goes
// (it may be killed at any moment, between a draw and its write), its
// name in journals to Name first; now and then void one it wrote, or
// release the key; then Close.
type journalSpec struct {
	Driver  string
	Dialect sqlseq.Dialect
	DSN     string
	Key     string
	Run     time.Duration
	Out     string
	Name    string
	Seed    uint64
}

func runJournalChild(js string) int {
	var s journalSpec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintln(os.Stderr, "journal child: bad spec:", err)
		return 2
	}
	if err := journalChild(s); err != nil {
		fmt.Fprintln(os.Stderr, "journal child:", err)
		return 1
	}
	return 0
}

func journalChild(s journalSpec) error {
	db, err := sql.Open(s.Driver, s.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := sqlseq.New(db, s.Dialect, sqlseq.Options{})
	if err != nil {
		return err
	}
	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{MinStep: 5, Step: 10, MaxStep: 40})
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.Name, []byte(journal.ProcessName()), 0o644); err != nil {
		return err
	}
	out, err := os.OpenFile(s.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(s.Seed, 1))
	end := time.Now().Add(s.Run)
	for time.Now().Before(end) {
		v, err := seg.Next(ctx, s.Key)
		if err != nil {
			return err
		}
		// Written one by one: a kill loses at most the number drawn now.
		if _, err := out.Write(binary.LittleEndian.AppendUint64(nil, uint64(v))); err != nil {
			return err
		}
		switch r.IntN(200) {
		case 0:
			if _, err := journal.Of(seg).Note(ctx, s.Key, journal.Event{Kind: journal.Voided, Range: sequence.Range{First: v, Last: v}, Reason: "a test: void"}); err != nil {
				return err
			}
		case 1:
			seg.Release(s.Key)
		}
		time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
	}
	if err := seg.Close(); err != nil {
		return err
	}
	// A fetch that failed, or a record not written, leaves the key
	// open (honestly): the parent allows it for this process.
	st := seg.Stats()
	if st.Errors > 0 || st.NotesLost > 0 {
		return os.WriteFile(s.Name+".doubt", []byte(fmt.Sprintf("%d fetch errors, %d records lost", st.Errors, st.NotesLost)), 0o644)
	}
	return nil
}

// Six processes draw one key through Segments over one ledger, each
// writing down every number it gets, and now and then voiding one or
// releasing the key; half are killed with SIGKILL mid-way. Then the
// journal verifies and explains every number: none written down is
// reported unused, skipped or unaccounted, and the open blocks are all
// the killed processes' (or those of a process a fetch or a record of
// which failed, under load, which closed without closing the key). The controls: a journal row deleted makes it
// fail; a release noted over numbers written down is seen.
func TestJournalFaults(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { testJournalFaults(t, b) })
	}
}

func testJournalFaults(t *testing.T, b backend) {
	db, dsn := b.openDSN(t)
	store := newStore(t, b, db, sqlseq.Options{})
	dir := t.TempDir()
	const key, procs = "inv", 6
	r := rand.New(rand.NewPCG(11, 12))
	type child struct {
		cmd  *exec.Cmd
		done chan error
		out  string
		name string
	}
	var kids []child
	for i := range procs {
		c := child{out: filepath.Join(dir, fmt.Sprintf("child%d.bin", i)), name: filepath.Join(dir, fmt.Sprintf("child%d.name", i)), done: make(chan error, 1)}
		js, _ := json.Marshal(journalSpec{Driver: b.driver, Dialect: b.dialect, DSN: dsn, Key: key,
			Run: time.Duration(800+r.IntN(800)) * time.Millisecond, Out: c.out, Name: c.name, Seed: uint64(i)})
		c.cmd = exec.Command(os.Args[0], "-test.run=^$")
		c.cmd.Env = append(os.Environ(), journalEnv+"="+string(js))
		c.cmd.Stderr = new(bytes.Buffer)
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { c.done <- c.cmd.Wait() }()
		kids = append(kids, c)
	}
	killed := map[int]bool{}
	time.Sleep(400 * time.Millisecond)
	for len(killed) < procs/2 {
		i := r.IntN(procs)
		if !killed[i] {
			kids[i].cmd.Process.Signal(syscall.SIGKILL)
			killed[i] = true
			time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
		}
	}
	written := map[int64]int{}
	dup := 0
	killedNames := map[string]bool{}
	doubtful := map[string]bool{} // processes that closed with a fetch failed or a record lost
	for i, c := range kids {
		err := <-c.done
		if !killed[i] && err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, c.cmd.Stderr)
		}
		name, _ := os.ReadFile(c.name)
		if killed[i] {
			killedNames[string(name)] = true
		}
		if why, err := os.ReadFile(c.name + ".doubt"); err == nil {
			doubtful[string(name)] = true
			t.Logf("child %d closed with %s: its last blocks may stay open", i, why)
		}
		data, _ := os.ReadFile(c.out)
		for j := 0; j+8 <= len(data); j += 8 {
			v := int64(binary.LittleEndian.Uint64(data[j:]))
			if _, ok := written[v]; ok {
				dup++
			}
			written[v] = i
		}
	}
	if dup != 0 {
		t.Fatalf("%d numbers written down twice", dup)
	}
	ctx := context.Background()
	check := func(t *testing.T) (problems []string) {
		events, head, err := journal.ReadJournal(ctx, store, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := journal.VerifyChain(key, events, head); err != nil {
			problems = append(problems, err.Error())
		}
		rep := journal.Audit(key, events, head, time.Now())
		problems = append(problems, rep.Problems...)
		count := map[journal.State]int64{}
		for _, sp := range rep.Spans {
			count[sp.State] += sp.Range.Len()
			if !sp.State.Explained() {
				problems = append(problems, fmt.Sprintf("%v %s: %s", sp.Range, sp.State, sp.Cause()))
			}
			if by := strings.TrimSuffix(sp.Event.By, " segment 1"); sp.State == journal.Open && !killedNames[by] && !doubtful[by] {
				problems = append(problems, fmt.Sprintf("%v open, by %s, which closed", sp.Range, sp.Event.By))
				for _, e := range events {
					if e.By == sp.Event.By && e.Seq >= sp.Event.Seq-20 {
						t.Logf("  %v", e)
					}
				}
			}
			switch sp.State {
			case journal.Issued, journal.Open, journal.Void:
			default:
				for v := sp.Range.First; v <= sp.Range.Last; v++ {
					if _, ok := written[v]; ok {
						problems = append(problems, fmt.Sprintf("%d, written down, is %s: %s", v, sp.State, sp.Cause()))
						break
					}
				}
			}
		}
		t.Logf("%d records; %d numbers written down by %d processes (%d killed); mark %d: %v", len(events), len(written), procs, len(killed), head.Mark, count)
		return problems
	}
	if p := check(t); len(p) > 0 {
		t.Fatalf("the journal does not account for the run:\n%s", strings.Join(p[:min(len(p), 10)], "\n"))
	}

	// The controls. A release noted over a number written down is seen.
	var some int64
	for v := range written {
		some = v
		break
	}
	if _, err := store.Note(ctx, key, journal.Event{Kind: journal.Released, Range: sequence.Range{First: some, Last: some}, Reason: "a lie"}); err != nil {
		t.Fatal(err)
	}
	if p := check(t); len(p) == 0 {
		t.Error("the control, a number written down noted unused: not seen")
	}
	// A reservation's row deleted is seen.
	del := `DELETE FROM sn_ledger_kv WHERE k = ?`
	if b.dialect == sqlseq.Postgres {
		del = `DELETE FROM sn_ledger_kv WHERE k = $1`
	}
	if _, err := db.ExecContext(ctx, del, []byte(journal.Key(key, 3))); err != nil {
		t.Fatal(err)
	}
	if p := check(t); len(p) == 0 {
		t.Error("the control, a journal row deleted: not seen")
	} else {
		t.Logf("the control, a row deleted: %s", p[0])
	}
}
