package redisseq_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// openLeaser opens a Leaser of the Redis at the address where.
func openLeaser(where string) (snowflake.Leaser, func(), error) {
	rdb := redis.NewClient(&redis.Options{Addr: where})
	l, err := redisseq.NewLeaser(rdb, redisseq.LeaserOptions{})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return l, func() { rdb.Close() }, nil
}

// Processes killed with SIGKILL pass worker ids on through Redis, and no
// id repeats (sequencetest.RunLeaserProcesses).
func TestLeaserMultiProcess(t *testing.T) {
	sequencetest.RunLeaserProcesses(t, redistest.Start(t, redistest.Persistent()).Addr(), 200*time.Millisecond)
}
