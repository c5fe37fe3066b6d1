package redisseq_test

import (
	"errors"
	"testing"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// Ping answers while Redis does, and wraps ErrUnavailable once it is gone.
func TestPing(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	pingers := []sequence.Pinger{
		must(redisseq.NewAllocator(rdb, sequence.NewMemoryAllocator(), redisseq.AllocatorOptions{})),
		must(redisseq.NewCounter(rdb, sequence.NewMemoryAllocator(), redisseq.CounterOptions{})),
		must(redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{})),
	}
	for _, p := range pingers {
		if err := p.Ping(t.Context()); err != nil {
			t.Errorf("%T.Ping: %v", p, err)
		}
	}
	srv.Kill(t)
	for _, p := range pingers {
		if err := p.Ping(t.Context()); !errors.Is(err, sequence.ErrUnavailable) {
			t.Errorf("%T.Ping with Redis killed: %v; want ErrUnavailable", p, err)
		}
	}
}
