package redisseq_test

import (
	"encoding/json"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	records "github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
	"github.com/sngen/sn/sequence/redisseq"
)

// recordsAt is where a store of records is, for a child process.
type recordsAt struct{ Addr, Prefix string }

func openRecords(where string) (records.Store, func(), error) {
	var at recordsAt
	if err := json.Unmarshal([]byte(where), &at); err != nil {
		return nil, nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: at.Addr})
	a, err := redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{Prefix: at.Prefix})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return a.Records(), func() { rdb.Close() }, nil
}

// TestRecords runs the record suite on Redis alone, a server that fsyncs
// every write.
func TestRecords(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	where, _ := json.Marshal(recordsAt{srv.Addr(), "rec:"})
	recordtest.Run(t, openRecords, string(where))
}
