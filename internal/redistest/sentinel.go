package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/testserver"
)

// MasterName is the name the sentinels of [StartSentinels] monitor their
// master by.
const MasterName = "sn-master"

// Sentinels are redis-sentinel processes on 127.0.0.1 watching one master
// (as [MasterName]), with a quorum of two: when the master stops
// answering for a second, they promote one of its replicas and repoint
// the others. Their methods are safe for concurrent use.
type Sentinels struct {
	Nodes []*Server
}

// StartSentinels starts three sentinels watching master, which should have
// replicas ([StartReplica]), and waits until each knows the master and its
// replicas and the other sentinels. They are stopped when the test ends.
func StartSentinels(tb testing.TB, master *Server) *Sentinels {
	tb.Helper()
	e := harness.Env(tb)
	ss := &Sentinels{}
	for range 3 {
		dir, err := os.MkdirTemp(e.root, "sentinel-")
		if err != nil {
			tb.Fatalf("redistest: %v", err)
		}
		var s *Server
		err = testserver.OnFreePort("redistest", func(port int) error {
			conf := filepath.Join(dir, "sentinel.conf")
			// Sentinel rewrites its file: a file of its own per start.
			err := os.WriteFile(conf, []byte(fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %s 1000
sentinel failover-timeout %s 5000
sentinel parallel-syncs %s 1
`, port, dir, MasterName, master.Port, MasterName, MasterName, MasterName)), 0o644)
			if err != nil {
				return err
			}
			s = &Server{Process: &testserver.Process{
				Pkg: "redistest", Name: "Redis Sentinel", Install: "redis-sentinel",
				Bin: e.bin, Args: []string{conf, "--sentinel"}, WorkDir: dir, Port: port,
				Log:          "sentinel.log",
				StartTimeout: startTimeout,
				StopSignal:   syscall.SIGTERM, StopTimeout: 10 * time.Second,
			}}
			addr := s.Addr()
			s.Ready = func() error { return ping(addr) }
			return s.Start()
		})
		if err != nil {
			os.RemoveAll(dir)
			tb.Fatalf("%v", err)
		}
		tb.Cleanup(func() { s.remove() })
		ss.Nodes = append(ss.Nodes, s)
	}
	ctx := context.Background()
	for _, s := range ss.Nodes {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr()})
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			m, err1 := sc.Master(ctx, MasterName).Result()
			others, err2 := sc.Sentinels(ctx, MasterName).Result()
			if err1 == nil && err2 == nil && m["num-other-sentinels"] == "2" && len(others) == 2 {
				break
			}
			if time.Now().After(deadline) {
				sc.Close()
				tb.Fatalf("redistest: sentinel %s does not see the master and the other sentinels: %v %v %v\nlog:\n%s", s.Addr(), m, err1, err2, s.LogTail())
			}
		}
		sc.Close()
	}
	return ss
}

// Addrs returns the sentinels' addresses.
func (ss *Sentinels) Addrs() []string {
	var a []string
	for _, s := range ss.Nodes {
		a = append(a, s.Addr())
	}
	return a
}

// URL returns a redis+sentinel:// URL of the sentinels and the master's
// name.
func (ss *Sentinels) URL() string {
	return "redis+sentinel://" + strings.Join(ss.Addrs(), ",") + "/" + MasterName
}

// Master returns the address of the master the sentinels name now.
func (ss *Sentinels) Master(tb testing.TB) string {
	tb.Helper()
	sc := redis.NewSentinelClient(&redis.Options{Addr: ss.Nodes[0].Addr()})
	defer sc.Close()
	a, err := sc.GetMasterAddrByName(context.Background(), MasterName).Result()
	if err != nil || len(a) != 2 {
		tb.Fatalf("redistest: the sentinels' master: %v, %v", a, err)
	}
	return net.JoinHostPort(a[0], a[1])
}

// WaitFailover waits until the sentinels name a master other than old, for
// 30 seconds at most, and returns it.
func (ss *Sentinels) WaitFailover(tb testing.TB, old string) string {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if m := ss.Master(tb); m != old {
			return m
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: no failover from %s within 30s", old)
		}
	}
}
