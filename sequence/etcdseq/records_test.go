package etcdseq_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
)

// storeAt is where a Store is, for a child process (of the record suite
// or of the leases' processes).
type storeAt struct {
	Endpoints []string
	Prefix    string
}

// openAt opens the Store that where (a storeAt in JSON) names, with its
// own client, and returns what closes it.
func openAt(where string) (*etcdseq.Store, func(), error) {
	var at storeAt
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
	return s, func() { cli.Close() }, nil
}

func openRecords(where string) (record.Store, func(), error) {
	s, closeFn, err := openAt(where)
	if err != nil {
		return nil, nil, err
	}
	return s.Records(), closeFn, nil
}

func TestRecords(t *testing.T) {
	c := etcdtest.Shared(t)
	where, _ := json.Marshal(storeAt{c.Endpoints(), "records/"})
	recordtest.Run(t, openRecords, string(where))
}

// More keys than a Txn carries are read at one revision (etcd refuses a
// Txn of more than 128 operations).
func TestRecordsManyKeys(t *testing.T) {
	c := etcdtest.Shared(t)
	rs, closeFn, err := openRecords(string(must(json.Marshal(storeAt{c.Endpoints(), "manykeys/"}))))
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	ctx := t.Context()
	var keys []string
	var ops []record.Op
	for i := range 300 {
		k := fmt.Sprintf("k%03d", i)
		keys = append(keys, k)
		if i%2 == 0 {
			ops = append(ops, record.Put(k, []byte(k)))
		}
	}
	for at := 0; at < len(ops); at += 50 {
		if ok, err := rs.Commit(ctx, nil, ops[at:min(at+50, len(ops))]); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	got, err := rs.Get(ctx, keys...)
	if err != nil {
		t.Fatalf("Get of %d keys: %v", len(keys), err)
	}
	for i, r := range got {
		if r.Key != keys[i] || r.Exists() != (i%2 == 0) || r.Exists() && string(r.Value) != keys[i] {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
}

// The records share the Store's prefix with its counters, deadlines,
// leases: no commit may write those (a put of "n/KEY" would
// move a counter back, a wide range delete would take them all), and the
// counter goes on above what it reserved.
func TestRecordsKeepOffCounters(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	r, err := s.Allocate(ctx, "orders", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []record.Op{
		record.Put("n/orders", []byte("0")),
		record.Delete("n/orders"),
		record.DeleteRange("a", "z"),
		record.DeleteRange("m", "o"),
		record.Put("id", []byte("forged")),
	} {
		if _, err := s.Records().Commit(ctx, nil, []record.Op{op}); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("a commit of %+v through the records: %v; want ErrInvalid", op, err)
		}
	}
	// The journals are records (package journal): a commit may write
	// them, and VerifyChain shows a write that is not a journal's.
	if ok, err := s.Records().Commit(ctx, nil, []record.Op{record.Put("idx", []byte("x")), record.DeleteRange("cat/", "cat0"), record.Put("jh/other", []byte("0 "+strings.Repeat("00", 32)+" 0"))}); !ok || err != nil {
		t.Errorf("a commit beside the Store's own keys: %v, %v", ok, err)
	}
	if r2, err := s.Allocate(ctx, "orders", 10); err != nil || r2.First != r.Last+1 {
		t.Errorf("the counter after the attempts: %v, %v; want it to go on from %d", r2, err, r.Last+1)
	}
}
