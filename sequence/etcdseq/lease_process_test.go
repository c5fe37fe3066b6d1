package etcdseq_test

import (
	"encoding/json"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// leaserAt is where a child of TestLeaserMultiProcess leases from.
type leaserAt struct {
	Endpoints []string
	Prefix    string
}

func openLeaser(where string) (snowflake.Leaser, func(), error) {
	var at leaserAt
	if err := json.Unmarshal([]byte(where), &at); err != nil {
		return nil, nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: at.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, err
	}
	s, err := etcdseq.New(cli, etcdseq.Options{Prefix: at.Prefix})
	var l *etcdseq.Leaser
	if err == nil {
		l, err = etcdseq.NewLeaser(s, etcdseq.LeaserOptions{})
	}
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	return l, func() { cli.Close() }, nil
}

// Processes killed with SIGKILL pass worker ids on through the cluster,
// and no id repeats (sequencetest.RunLeaserProcesses).
func TestLeaserMultiProcess(t *testing.T) {
	c := etcdtest.Shared(t)
	where, _ := json.Marshal(leaserAt{c.Endpoints(), newStore(t, c, etcdseq.Options{}).Prefix()})
	sequencetest.RunLeaserProcesses(t, string(where), time.Second) // etcd counts leases in seconds
}
