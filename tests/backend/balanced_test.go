package backend_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
)

// A balanced sequence over two strict Redis counters, each with a queue:
// numbering goes on while one Redis is killed, and after it comes back
// empty its member continues above everything its file handed out. A
// second Build (a restart of the process) continues too. No number is
// issued twice.
func TestBalancedRedis(t *testing.T) {
	srvA, srvB := redistest.Start(t), redistest.Start(t)
	dir := t.TempDir()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "redis-strict", Step: 50, FetchTimeout: "30s", Queued: &config.Queue{Lead: "5ms", Max: 64}, Options: config.Options{"single_host": true}},
		Templates: map[string]config.Template{
			"o": {Template: "@<ownerKey, value=O>@<seq>", Floor: 500, Sequence: config.Sequence{Balanced: &config.Balance{
				Rescue: "100ms", Timeout: "20s",
				Members: []config.Sequence{{Options: config.Options{"url": "redis://" + srvA.Addr() + "/0", "path": "a.db"}}, {Options: config.Options{"url": "redis://" + srvB.Addr() + "/0", "path": "b.db"}}},
			}}},
			// The same counters (the same members in the same order, the
			// same counter key), behind queues of one number.
			"p": {Template: "@<ownerKey, value=O>@<seq>", Sequence: config.Sequence{Queued: &config.Queue{Min: 1, Max: 1}, Balanced: &config.Balance{
				Rescue: "100ms", Timeout: "20s",
				Members: []config.Sequence{{Options: config.Options{"url": "redis://" + srvA.Addr() + "/0", "path": "a.db"}}, {Options: config.Options{"url": "redis://" + srvB.Addr() + "/0", "path": "b.db"}}},
			}}},
		},
	}
	seen := map[string]bool{}
	// phase issues numbers and returns how many came from each member.
	phase := func(name string, set *config.Set) [2]int {
		t.Helper()
		got := issueConcurrently(t, set, []string{"o", "p"}, 8, 400)
		if n := countRepeats(seen, got); n != 0 {
			t.Errorf("%s: %d repeats", name, n)
		}
		var by [2]int
		for _, ss := range got {
			for _, s := range ss {
				n := seqOf(t, s, "O")
				if n <= 500 {
					t.Errorf("%s: %s at or below the floor", name, s)
				}
				by[n&1]++
			}
		}
		t.Logf("%s: %d numbers from member 0, %d from member 1", name, by[0], by[1])
		return by
	}
	set, err := cfg.Build(t.Context(), config.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if by := phase("both up", set); by[0] == 0 || by[1] == 0 {
		t.Errorf("both up: %v numbers by member, want some from each", by)
	}
	srvB.Kill(t)
	if by := phase("b killed", set); by[0] < 3000 {
		t.Errorf("b killed: %v numbers by member, want nearly all from a", by)
	}
	srvB.Restart(t) // empty: its counters come back from b.db, above what it handed out
	// b is back in the turn once its rescue has passed and its client
	// reconnects (the pool backs off after failed dials, longer on a busy
	// machine): wait for its first number, for at most 60 s, rather than
	// a fixed time.
	extra := 0
	o, _ := set.Get("o")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := o.Next(t.Context())
		if err != nil {
			t.Fatalf("after b's restart: %v", err)
		}
		extra++
		if countRepeats(seen, [][]string{{s}}) != 0 {
			t.Errorf("after b's restart: %s repeated", s)
		}
		if seqOf(t, s, "O")&1 == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b did not come back into the turn within 60 s (%d numbers from a meanwhile)", extra)
		}
	}
	if by := phase("b back", set); by[1] == 0 {
		t.Errorf("b back: %v numbers by member, want b in the turn again", by)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}

	set, err = cfg.Build(t.Context(), config.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	phase("second Build", set)
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4*8*400+extra {
		t.Errorf("%d numbers, want %d", len(seen), 4*8*400+extra)
	}
	// Each file knows what its member handed out.
	for _, f := range []string{"a.db", "b.db"} {
		if n := last(t, filepath.Join(dir, f), "O"); n < 500/2 {
			t.Errorf("%s: mark %d, want above the floor's share %d", f, n, 500/2)
		}
	}
}
