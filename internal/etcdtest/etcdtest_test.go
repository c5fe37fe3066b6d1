package etcdtest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sngen/sn/internal/etcdtest"
)

func TestMain(m *testing.M) { etcdtest.Main(m) }

// put writes k, trying for 20 seconds at most. An attempt gets a second:
// the client's first request after a member died can wait on that member's
// connection until its deadline, and the next one goes to another.
func put(t *testing.T, cli *clientv3.Client, k, v string) (err error) {
	t.Helper()
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = cli.Put(ctx, k, v)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

func get(t *testing.T, cli *clientv3.Client, k string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	if len(r.Kvs) == 0 {
		return ""
	}
	return string(r.Kvs[0].Value)
}

// Three members form a cluster with a leader; a write through one is read
// through another.
func TestCluster(t *testing.T) {
	c := etcdtest.Shared(t)
	if len(c.Members) != etcdtest.Size {
		t.Fatalf("%d members, want %d", len(c.Members), etcdtest.Size)
	}
	cli := c.Client(t)
	if err := put(t, cli, "TestCluster", "v"); err != nil {
		t.Fatal(err)
	}
	c.Leader(t)
	if got := get(t, cli, "TestCluster"); got != "v" {
		t.Fatalf("get = %q, want v", got)
	}
	if shared := etcdtest.Shared(t); shared != c {
		t.Error("Shared started a second cluster")
	}
}

// The leader killed: the others elect another and go on, and the old
// leader restarted has every acknowledged write. A member paused past the
// election timeout and resumed rejoins.
func TestKillPauseRestart(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	if err := put(t, cli, "before", "1"); err != nil {
		t.Fatal(err)
	}
	old := c.Leader(t)
	old.Kill(t)
	if err := put(t, cli, "during", "2"); err != nil {
		t.Fatalf("a write with the leader killed: %v", err)
	}
	if now := c.Leader(t); now == old {
		t.Fatal("the killed member still leads")
	}
	old.Restart(t)
	c.WaitHealthy(t)
	paused := c.Members[0]
	paused.Pause(t)
	time.Sleep(3 * time.Second / 2) // past the election timeout
	if err := put(t, cli, "paused", "3"); err != nil {
		t.Fatalf("a write with one member paused: %v", err)
	}
	paused.Resume(t)
	c.WaitHealthy(t)
	for k, want := range map[string]string{"before": "1", "during": "2", "paused": "3"} {
		if got := get(t, cli, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// With two of three members down nothing can be written; a write fails
// within its deadline and works again once one comes back.
func TestMajorityDown(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	c.Members[1].Stop(t)
	c.Members[2].Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err := cli.Put(ctx, "k", "v")
	cancel()
	if err == nil {
		t.Fatal("a write with a majority down succeeded")
	}
	c.Members[2].Restart(t)
	c.WaitHealthy(t)
	if err := put(t, cli, "k", "v"); err != nil {
		t.Fatalf("a write with a majority back: %v", err)
	}
}

// A member replaced by an empty one catches up from the leader: it serves
// what was written before, and the cluster goes on.
func TestReplace(t *testing.T) {
	c := etcdtest.Start(t)
	cli := c.Client(t)
	if err := put(t, cli, "before", "1"); err != nil {
		t.Fatal(err)
	}
	m := c.Members[1]
	c.Replace(t, m)
	if err := put(t, cli, "after", "2"); err != nil {
		t.Fatal(err)
	}
	// Read from the replaced member alone.
	one, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for k, want := range map[string]string{"before": "1", "after": "2"} {
		if got := get(t, one, k); got != want {
			t.Errorf("%s on the replaced member = %q, want %q", k, got, want)
		}
	}
}
