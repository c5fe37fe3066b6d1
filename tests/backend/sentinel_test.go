package backend_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	backendredis "github.com/sngen/sn/backend/redis"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
)

// sentinelFailover issues from 4 goroutines with issue, while the replica
// is cut off (cutOff: it receives nothing more), then kills the master and
// resumes the replica, which the sentinels promote: a failover to a
// replica that lagged. It goes on issuing through the new master, and
// returns every number issued and how many calls failed.
func sentinelFailover(t *testing.T, issue func(ctx context.Context) ([]string, error), master, replica *redistest.Server, ss *redistest.Sentinels) (nums []string, failed int) {
	t.Helper()
	var mu sync.Mutex
	run := func(d time.Duration) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for end := time.Now().Add(d); time.Now().Before(end); {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					out, err := issue(ctx)
					cancel()
					mu.Lock()
					if err != nil {
						failed++
					} else {
						nums = append(nums, out...)
					}
					mu.Unlock()
					if err != nil {
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
	}
	run(500 * time.Millisecond)
	cutOff(t, master, replica)
	run(500 * time.Millisecond) // the replica receives none of this
	master.Kill(t)
	replica.Resume(t)
	ss.WaitFailover(t, master.Addr())
	run(2 * time.Second)
	return nums, failed
}

// cutOff makes the replica lag for good: paused, it reads nothing, and the
// master, whose output buffer for replicas is made small, drops it once
// the kernel's buffers and its own are full of junk; what the master
// writes after that never reaches the replica. (A replica paused without
// more would find in its socket everything the master sent before dying.)
func cutOff(t *testing.T, master, replica *redistest.Server) {
	t.Helper()
	ctx := t.Context()
	rdb := master.Client(t)
	if err := rdb.ConfigSet(ctx, "client-output-buffer-limit", "replica 1mb 1mb 0").Err(); err != nil {
		t.Fatal(err)
	}
	replica.Pause(t)
	junk := strings.Repeat("x", 1<<20)
	for i := 0; ; i++ {
		if redistest.InfoField(t, rdb, "replication", "connected_slaves") == "0" {
			break
		}
		if i == 256 {
			t.Fatal("the master still has its replica after 256 MB written")
		}
		if err := rdb.Set(ctx, fmt.Sprintf("junk-%d", i), junk, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { rdb.Del(context.Background(), "junk-*") })
}

// repeatedStrings counts the strings issued more than once.
func repeatedStrings(nums []string) int {
	seen := map[string]bool{}
	n := 0
	for _, s := range nums {
		if seen[s] {
			n++
		}
		seen[s] = true
	}
	return n
}

// A redis sequence behind Redis Sentinel follows the failover to a
// replica that lagged and repeats nothing: with a ledger (a gap); Redis
// alone with replicas set (a range no replica acknowledged is not used);
// Redis alone without (it sees that Redis lost data, and stops). The
// control, a counter with INCR through the same failover client, repeats.
func TestSentinelFailover(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts func(t *testing.T, url string) config.Options // nil: the control
	}{
		{"ledger", func(t *testing.T, url string) config.Options {
			return config.Options{"url": url, "ledger": pgtest.Shared(t).NewDatabase(t)}
		}},
		{"redis alone, replicas 1", func(t *testing.T, url string) config.Options {
			return config.Options{"url": url, "replicas": 1, "replica_timeout": "200ms"}
		}},
		{"redis alone", func(t *testing.T, url string) config.Options {
			return config.Options{"url": url}
		}},
		{"control: INCR", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			master := redistest.Start(t, redistest.Persistent())
			replica := redistest.StartReplica(t, master, redistest.Persistent())
			ss := redistest.StartSentinels(t, master)
			var issue func(ctx context.Context) ([]string, error)
			if tt.opts == nil {
				rdb, err := backendredis.NewClient(ss.URL())
				if err != nil {
					t.Fatal(err)
				}
				defer rdb.Close()
				issue = func(ctx context.Context) ([]string, error) {
					n, err := rdb.Incr(ctx, "control").Result()
					return []string{strconv.FormatInt(n, 10)}, err
				}
			} else {
				cfg := &config.Config{
					Store:     config.Sequence{Backend: "redis", Step: 10, MaxStep: 10, Options: tt.opts(t, ss.URL())},
					Templates: map[string]config.Template{"t": {Template: "T@<seq>"}},
				}
				set, err := cfg.Build(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				defer set.Close()
				g, _ := set.Get("t")
				issue = func(ctx context.Context) ([]string, error) { return g.Issue(ctx, sn.Request{N: 10}) }
			}
			nums, failed := sentinelFailover(t, issue, master, replica, ss)
			r := repeatedStrings(nums)
			t.Logf("%s: %d numbers, %d calls failed, %d repeated", tt.name, len(nums), failed, r)
			switch {
			case tt.opts == nil && r == 0:
				t.Fatal("the control repeated nothing: the test cannot see a repeat")
			case tt.opts != nil && r != 0:
				t.Errorf("%d numbers issued twice", r)
			}
			if len(nums) == 0 {
				t.Fatal("nothing issued")
			}
		})
	}
}
