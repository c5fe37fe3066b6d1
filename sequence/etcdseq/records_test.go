package etcdseq_test

import (
	"encoding/json"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
)

// recordsAt is where a store of records is, for a child process.
type recordsAt struct {
	Endpoints []string
	Prefix    string
}

func openRecords(where string) (record.Store, func(), error) {
	var at recordsAt
	if err := json.Unmarshal([]byte(where), &at); err != nil {
		return nil, nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: at.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, err
	}
	s, err := etcdseq.New(cli, etcdseq.Options{Prefix: at.Prefix})
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	return s.Records(), func() { cli.Close() }, nil
}

func TestRecords(t *testing.T) {
	c := etcdtest.Shared(t)
	where, _ := json.Marshal(recordsAt{c.Endpoints(), "records/"})
	recordtest.Run(t, openRecords, string(where))
}
