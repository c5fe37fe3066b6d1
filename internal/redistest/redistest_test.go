package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestServerStartKillRestart(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr() = %q, want a 127.0.0.1 address", srv.Addr())
	}
	rdb := srv.Client(t)
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	srv.Kill(t)
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING after Kill succeeded")
	}
	srv.Kill(t) // killing a dead server does nothing

	srv.Restart(t)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS k after restart without persistence = %d, %v; want 0 (empty data)", n, err)
	}
	// The defaults: no RDB snapshots, no AOF.
	cfg, err := rdb.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"save": "", "appendonly": "no", "bind": "127.0.0.1"} {
		if got := cfg[k]; got != want {
			t.Errorf("CONFIG GET %s = %q, want %q", k, got, want)
		}
	}
}

func TestServerPersistentSurvivesKill(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	if err := rdb.IncrBy(ctx, "n", 41).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	srv.Restart(t)
	if n, err := rdb.Incr(ctx, "n").Result(); err != nil || n != 42 {
		t.Fatalf("INCR n after kill -9 and restart = %d, %v; want 42", n, err)
	}
	srv.Stop(t)
	srv.Restart(t)
	if n, err := rdb.Get(ctx, "n").Int64(); err != nil || n != 42 {
		t.Fatalf("GET n after stop and restart = %d, %v; want 42", n, err)
	}
}

func TestServerArgs(t *testing.T) {
	srv := redistest.Start(t, redistest.Args("--maxmemory", "7mb"))
	got, err := srv.Client(t).ConfigGet(context.Background(), "maxmemory").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory"] != fmt.Sprint(7<<20) {
		t.Fatalf("maxmemory = %q, want %d", got["maxmemory"], 7<<20)
	}
}

func TestServersAreIndependent(t *testing.T) {
	ctx := context.Background()
	var servers [3]*redistest.Server
	for i := range servers {
		servers[i] = redistest.Start(t)
	}
	seen := map[string]bool{}
	for i, s := range servers {
		if seen[s.Addr()] {
			t.Fatalf("address %s handed out twice", s.Addr())
		}
		seen[s.Addr()] = true
		if err := s.Client(t).Set(ctx, "who", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range servers {
		if got, _ := s.Client(t).Get(ctx, "who").Int(); got != i {
			t.Errorf("server %d holds who=%d", i, got)
		}
	}
}

// fatalTB records Fatalf instead of failing the real test.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func TestStartFailsLoudly(t *testing.T) {
	tests := []struct {
		name string
		opt  redistest.Option
		want []string
	}{
		{"missing binary", redistest.Binary("/nonexistent/redis-server"), []string{"redis-server", "make test"}},
		{"server refuses to start", redistest.Args("--no-such-option", "x"), []string{"did not start", "make test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fatalTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				redistest.Start(f, tt.opt)
			}()
			<-done
			if f.msg == "" {
				t.Fatal("Start did not call Fatalf")
			}
			for _, w := range tt.want {
				if !strings.Contains(f.msg, w) {
					t.Errorf("Fatalf message %q does not mention %q", f.msg, w)
				}
			}
		})
	}
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	c := redistest.SharedCluster(t)
	if len(c.Addrs()) != 3 {
		t.Fatalf("Addrs() = %v, want 3 nodes", c.Addrs())
	}
	for _, a := range c.Addrs() {
		n := redis.NewClient(&redis.Options{Addr: a})
		info, err := n.ClusterInfo(ctx).Result()
		n.Close()
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			t.Fatalf("CLUSTER INFO on %s = %q, %v", a, info, err)
		}
	}
	rdb := c.Client(t)
	// Keys spread over all three masters, and each master owns some.
	for i := range 100 {
		if err := rdb.Set(ctx, fmt.Sprintf("redistest:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	owners := map[string]int64{}
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		mu.Lock()
		owners[m.Options().Addr] = n
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != 3 {
		t.Fatalf("found %d masters, want 3: %v", len(owners), owners)
	}
	for addr, n := range owners {
		if n == 0 {
			t.Errorf("master %s holds no key of 100: %v", addr, owners)
		}
	}
	// A multi-key script works when its keys share a hash tag.
	v, err := rdb.Eval(ctx, "redis.call('SET', KEYS[1], 'a'); redis.call('SET', KEYS[2], 'b'); return redis.call('MGET', KEYS[1], KEYS[2])",
		[]string{"{tag}:1", "{tag}:2"}).StringSlice()
	if err != nil || strings.Join(v, ",") != "a,b" {
		t.Fatalf("Eval on one slot = %v, %v", v, err)
	}
	// Without a shared tag, the cluster refuses.
	err = rdb.Eval(ctx, "return 1", []string{"x1", "x2"}).Err()
	if err == nil || !errors.Is(err, redis.ErrCrossSlot) && !redis.HasErrorPrefix(err, "CROSSSLOT") {
		t.Fatalf("cross-slot Eval: err = %v, want CROSSSLOT", err)
	}
}

func TestSharedClusterIsShared(t *testing.T) {
	a, b := redistest.SharedCluster(t), redistest.SharedCluster(t)
	if a != b {
		t.Fatal("SharedCluster started a second cluster")
	}
}

// Servers and clusters started by a test are gone when it ends.
func TestCleanupStopsServers(t *testing.T) {
	var addrs, dirs []string
	t.Run("inner", func(t *testing.T) {
		srv := redistest.Start(t)
		addrs = append(addrs, srv.Addr())
		dirs = append(dirs, srv.Dir())
		addrs = append(addrs, redistest.StartCluster(t).Addrs()...)
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("server directory %s still there after the test that started it ended: %v", d, err)
		}
	}
	if len(addrs) != 4 {
		t.Fatalf("started %d servers, want 4", len(addrs))
	}
	for _, a := range addrs {
		if conn, err := net.Dial("tcp", a); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after the test that started it ended", a)
		}
	}
}

func TestReplica(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	if err := master.Client(t).Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	replica := redistest.StartReplica(t, master)
	rr := replica.Client(t)
	if v, err := rr.Get(ctx, "before").Result(); err != nil || v != "1" {
		t.Fatalf("GET before on the replica = %q, %v; want the initial sync to have copied it", v, err)
	}
	if err := master.Client(t).Set(ctx, "after", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := master.Client(t).Wait(ctx, 1, 10*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	if v, err := rr.Get(ctx, "after").Result(); err != nil || v != "2" {
		t.Fatalf("GET after on the replica = %q, %v", v, err)
	}
	if err := rr.Set(ctx, "x", "y", 0).Err(); err == nil || !redis.HasErrorPrefix(err, "READONLY") {
		t.Fatalf("SET on the replica: %v, want READONLY", err)
	}
}

// Three sentinels watch a master with a replica; the master killed, they
// promote the replica, and a failover client follows.
func TestSentinels(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	ss := redistest.StartSentinels(t, master)
	if got := ss.Master(t); got != master.Addr() {
		t.Fatalf("the sentinels' master is %s, want %s", got, master.Addr())
	}
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.MasterName, SentinelAddrs: ss.Addrs()})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	master.Kill(t)
	if got := ss.WaitFailover(t, master.Addr()); got != replica.Addr() {
		t.Fatalf("the sentinels promoted %s, want the replica %s", got, replica.Addr())
	}
	var err error
	for range 100 {
		if err = rdb.Set(ctx, "k2", "v", 0).Err(); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("a write after the failover: %v", err)
	}
}
