package etcdseq_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

func openLeaser(where string) (snowflake.Leaser, func(), error) {
	s, closeFn, err := openAt(where)
	if err != nil {
		return nil, nil, err
	}
	l, err := etcdseq.NewLeaser(s, etcdseq.LeaserOptions{})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return l, closeFn, nil
}

// Processes killed with SIGKILL pass worker ids on through the cluster,
// and no id repeats (sequencetest.RunLeaserProcesses).
func TestLeaserMultiProcess(t *testing.T) {
	c := etcdtest.Shared(t)
	where, _ := json.Marshal(storeAt{c.Endpoints(), newStore(t, c, etcdseq.Options{}).Prefix()})
	sequencetest.RunLeaserProcesses(t, string(where), time.Second) // a Raft commit per step: a loaded machine is slow
}
