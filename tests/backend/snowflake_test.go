package backend_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// issueConcurrently draws n numbers from each of goroutines goroutines
// taking templates names of set in turn, and returns them per goroutine.
func issueConcurrently(t *testing.T, set *config.Set, names []string, goroutines, n int) [][]string {
	t.Helper()
	// A worker id new to its store issues after one TTL (10 s): wait,
	// boundedly, until the Set's stores say they issue.
	for try := 0; ; try++ {
		ready := true
		for _, st := range set.Ping(t.Context()) {
			ready = ready && st.Err == nil
		}
		if ready {
			break
		}
		if try == 300 {
			for _, st := range set.Ping(t.Context()) {
				t.Log(st.Err)
			}
			t.Fatal("the Set's stores did not become ready within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := make([][]string, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, _ := set.Get(names[i%len(names)])
			for range n {
				s, err := g.Next(t.Context())
				if err != nil {
					t.Errorf("%s: %v", names[i%len(names)], err)
					return
				}
				out[i] = append(out[i], s)
			}
		}()
	}
	wg.Wait()
	return out
}

// countRepeats counts the strings of got already in seen, and adds them.
func countRepeats(seen map[string]bool, got [][]string) int {
	n := 0
	for _, ss := range got {
		for _, s := range ss {
			if seen[s] {
				n++
			}
			seen[s] = true
		}
	}
	return n
}

// Worker ids leased from Redis or from a ledger's database: two Sets built
// at once (two processes) hold two ids, the templates of one Set share its
// lease, and a later Set that takes an id again issues after the bound its
// holder recorded. The layout has two worker ids, so the second round
// takes both again.
func TestSnowflakeLeased(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Persistent())
		leased(t, config.Sequence{Options: config.Options{"url": "redis://" + srv.Addr() + "/0", "prefix": "t:"}})
		// Closed Sets released their leases; the bounds stay, in the
		// records, beside the fence of an earlier release's keys.
		keys, err := srv.Client(t).Keys(t.Context(), "t:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			switch rest, _ := strings.CutPrefix(k, "t:{worker:snowflake}:"); {
			case strings.HasPrefix(k, "t:{%records}:"), rest == "layout", rest == "epoch":
			default:
				t.Errorf("key %s left after Close; want only the records and the fence of an earlier release's keys", k)
			}
		}
		if held, bounds := leases(t, redisLeases(t, srv.Client(t), "t:")); held != 0 || bounds != 2 {
			t.Errorf("after Close: %d leases held, %d bounds recorded; want 0 and 2", held, bounds)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		ledger := pgtest.Shared(t).NewDatabase(t)
		leased(t, config.Sequence{Options: config.Options{"ledger": ledger, "table": "ids"}})
		db, err := sql.Open("pgx", ledger)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		store, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{Table: "ids"})
		if err != nil {
			t.Fatal(err)
		}
		held, bounds := leases(t, store.Records())
		if held != 0 || bounds != 2 {
			t.Errorf("after Close: %d leases held, %d bounds recorded; want 0 and 2", held, bounds)
		}
	})
}

// leases counts the worker-id leases in recs that are held, and those
// with a bound.
func leases(t *testing.T, recs record.Store) (held, bounds int) {
	t.Helper()
	rs, err := recs.Scan(t.Context(), "wk/", "wk0", 0)
	if err != nil {
		t.Fatal(err)
	}
	now, err := recs.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !strings.Contains(r.Key, "/id/") {
			continue // the layout
		}
		var l struct {
			Deadline int64 `json:"deadline_us"`
			Bound    int64 `json:"bound_ns"`
		}
		if err := json.Unmarshal(r.Value, &l); err != nil {
			t.Fatalf("lease %s: %v", r.Key, err)
		}
		if l.Deadline > now.UnixMicro() {
			held++
		}
		if l.Bound > 0 {
			bounds++
		}
	}
	return held, bounds
}

// redisLeases returns the records the worker-id leases of rdb's prefix
// are in.
func redisLeases(t *testing.T, rdb redis.UniversalClient, prefix string) record.Store {
	t.Helper()
	l, err := redisseq.NewLeaser(rdb, redisseq.LeaserOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return l.Records()
}

// leased runs TestSnowflakeLeased with the lease store src.
func leased(t *testing.T, src config.Sequence) {
	layout := snowflake.Layout{TimeBits: 41, WorkerBits: 1, SeqBits: 12, Epoch: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Unit: time.Millisecond}
	store := src
	store.Backend, store.Options = "snowflake", maps.Clone(src.Options)
	store.Options["layout"], store.Options["epoch"] = "41/1/12", "2024-01-01"
	cfg := &config.Config{
		Store: store,
		Templates: map[string]config.Template{
			"a": {Template: "@<ownerKey, value=ID>-@<seq>"},
			"q": {Template: "@<ownerKey, value=ID>-@<seq>", Sequence: config.Sequence{Queued: &config.Queue{Lead: "5ms"}}},
		},
	}
	seen := map[string]bool{}
	last := map[int64]time.Time{} // per worker, the time of its last id
	retaken := 0                  // ids of a worker id held before
	for round := range 2 {
		// Two Sets at once, each with its own lease.
		var sets [2]*config.Set
		for i := range sets {
			set, err := cfg.Build(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			sets[i] = set
		}
		var workers []int64
		roundLast := map[int64]time.Time{}
		for i, set := range sets {
			got := issueConcurrently(t, set, []string{"a", "q"}, 4, 5000)
			if n := countRepeats(seen, got); n != 0 {
				t.Errorf("round %d, set %d: %d repeats", round, i, n)
			}
			var worker int64 = -1
			for _, ss := range got {
				for _, s := range ss {
					id, err := layout.Decompose(seqOf(t, s, "ID-"))
					if err != nil {
						t.Fatal(err)
					}
					if worker >= 0 && id.Worker != worker {
						t.Fatalf("round %d, set %d: ids of workers %d and %d: its templates hold one lease", round, i, worker, id.Worker)
					}
					worker = id.Worker
					if prev, ok := last[id.Worker]; ok {
						retaken++
						if !id.Time.After(prev) {
							t.Fatalf("round %d: worker %d issued at %v, not after its earlier holder's last id at %v", round, id.Worker, id.Time, prev)
						}
					}
					if id.Time.After(roundLast[id.Worker]) {
						roundLast[id.Worker] = id.Time
					}
				}
			}
			workers = append(workers, worker)
		}
		if workers[0] == workers[1] {
			t.Errorf("round %d: both Sets hold worker %d", round, workers[0])
		}
		for _, set := range sets {
			if err := set.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for w, at := range roundLast {
			last[w] = at
		}
	}
	if retaken != 2*4*5000 {
		t.Errorf("%d ids of the second round from worker ids held in the first, want all %d", retaken, 2*4*5000)
	}
	if len(seen) != 2*2*4*5000 {
		t.Errorf("%d ids, want %d", len(seen), 2*2*4*5000)
	}
}

// The bound of a worker id is what keeps ids unique: a Redis that could
// lose it is refused at Build, which opens nothing.
func TestSnowflakeUnsafeRedis(t *testing.T) {
	srv := redistest.Start(t) // appendonly no
	url := "redis://" + srv.Addr() + "/0"
	_, err := one("A@<seq>", config.Sequence{Backend: "snowflake", Options: config.Options{"url": url}}).Build(t.Context())
	if !errors.Is(err, redisseq.ErrUnsafe) || !strings.HasPrefix(err.Error(), `config: template "a": snowflake sequence: snowflake: leasing a worker id: `) {
		t.Errorf("Build = %v, want redisseq.ErrUnsafe for template a's snowflake sequence", err)
	}
	if n, err := srv.Client(t).DBSize(t.Context()).Result(); err != nil || n != 0 {
		t.Errorf("the unsafe Redis holds %d keys (%v), want none written", n, err)
	}
}

// A snowflake sequence and a redis one on one URL share the Build's
// client: the Set closes it after the Gen has released its lease.
func TestSnowflakeBesideRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	url := "redis://" + srv.Addr() + "/0"
	cfg := &config.Config{
		Store: config.Sequence{Options: config.Options{"url": url}},
		Templates: map[string]config.Template{
			"ids":    {Template: "ID-@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"layout": "sonyflake"}}},
			"orders": {Template: "SN-@<seq>", Sequence: config.Sequence{Backend: "redis", Step: 10}},
		},
	}
	set, err := cfg.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ids := issue(t, set, "ids", 300) // sonyflake: 256 per 10 ms, so this waits a unit
	orders := issue(t, set, "orders", 3)
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(orders, []string{"SN-1", "SN-2", "SN-3"}) {
		t.Errorf("orders = %q", orders)
	}
	// One Gen's ids increase, so none repeats; all are its worker's.
	first, err := snowflake.Sonyflake.Decompose(seqOf(t, ids[0], "ID-"))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ids {
		id, err := snowflake.Sonyflake.Decompose(seqOf(t, s, "ID-"))
		if err != nil || id.Worker != first.Worker {
			t.Fatalf("%s: %+v, %v; want worker %d", s, id, err, first.Worker)
		}
		if i > 0 && seqOf(t, s, "ID-") <= seqOf(t, ids[i-1], "ID-") {
			t.Fatalf("%s after %s: one Gen's ids increase", s, ids[i-1])
		}
	}
	if held, _ := leases(t, redisLeases(t, srv.Client(t), "")); held != 0 {
		t.Errorf("%d leases held after Close", held)
	}
}

// A config whose snowflake layout changed (a rolling deploy: 41/2/11, then
// 41/1/12, the same bits for worker 2 and worker 1) is refused at Build on
// the Redis that recorded the first layout, with the way out; under
// another prefix it builds.
func TestSnowflakeLayoutChange(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	build := func(layout, prefix string) (*config.Set, error) {
		cfg := &config.Config{Templates: map[string]config.Template{"a": {
			Template: "ID-@<seq>",
			Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"url": "redis://" + srv.Addr() + "/0", "prefix": prefix, "layout": layout, "epoch": "2024-01-01"}},
		}}}
		return cfg.Build(t.Context())
	}
	first, err := build("41/2/11", "")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = build("41/1/12", "")
	if !errors.Is(err, snowflake.ErrLayout) || !strings.Contains(err.Error(), "its own prefix") {
		t.Fatalf("another layout under the recorded one: %v; want snowflake.ErrLayout and the way out", err)
	}
	other, err := build("41/1/12", "v2:")
	if err != nil {
		t.Fatalf("another layout under another prefix: %v", err)
	}
	other.Close()
}
