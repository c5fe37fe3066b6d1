package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/testserver"
)

// clusterMasters is the number of master nodes of a [Cluster].
const clusterMasters = 3

// Cluster is a Redis Cluster of three masters without replicas, every node
// a redis-server on 127.0.0.1 with its own directory and node config file.
// Its methods are safe for concurrent use.
type Cluster struct {
	nodes []*Server
	dir   string // the nodes' directories, removed by stop
}

// StartCluster starts a three-master Redis Cluster, waits until every node
// reports cluster_state:ok, and stops it when the test ends. Forming a
// cluster takes a few seconds; to share one cluster among all the tests of
// a package use [SharedCluster]. StartCluster calls tb.Fatalf when the
// cluster cannot be started, or the package's TestMain does not call
// [Main]; it never skips.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	return harness.Start(tb)
}

// SharedCluster returns a three-master Redis Cluster started on first use and
// shared by all the tests of the package; [Main] stops it after the last
// test. Tests sharing it must use keys of their own. SharedCluster calls
// tb.Fatalf when the cluster cannot be started, and when the package's
// TestMain does not call Main (the servers would outlive the test binary).
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	return harness.Shared(tb)
}

// startCluster starts the nodes in a directory of the cluster's own and
// joins them.
func (e *env) startCluster(bool) (_ *Cluster, err error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, notInstalled("redis-cli", err)
	}
	dir, err := os.MkdirTemp(e.root, "cluster-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	c := &Cluster{dir: dir}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	for i := range clusterMasters {
		nodeDir := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.Mkdir(nodeDir, 0o755); err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s, err := startServer(config{bin: e.bin, cluster: true}, nodeDir)
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, s)
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redistest: redis-cli --cluster create failed: %v\n%s", err, out)
	}
	if err := c.waitOK(ctx); err != nil {
		return nil, fmt.Errorf("redistest: cluster %v did not become ready: %w\nredis-cli said:\n%s", c.Addrs(), err, out)
	}
	return c, nil
}

// waitOK polls every node until CLUSTER INFO says cluster_state:ok with all
// 16384 slots assigned and every node knows all the others.
func (c *Cluster) waitOK(ctx context.Context) error {
	var last string
	for _, n := range c.nodes {
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr()})
		for {
			info, err := rdb.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_slots_ok:16384") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.nodes))) {
				break
			}
			last = fmt.Sprintf("node %s: %v %s", n.Addr(), err, info)
			select {
			case <-ctx.Done():
				rdb.Close()
				return errors.New(last)
			case <-time.After(20 * time.Millisecond):
			}
		}
		rdb.Close()
	}
	return nil
}

// Addrs returns the addresses of the cluster's nodes.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		a[i] = n.Addr()
	}
	return a
}

// Client returns a new cluster client, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	tb.Cleanup(func() { rdb.Close() })
	return rdb
}

// stop stops the nodes and removes the cluster's directory.
func (c *Cluster) stop() {
	testserver.HaltAll(c.nodes)
	os.RemoveAll(c.dir)
}
