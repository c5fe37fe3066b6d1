package etcdseq_test

import (
	"testing"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/sequencetest"
)

// The retention guard over an etcd ledger: counters per second expire by
// the Store's clock (sequencetest.RunClockGuard).
func TestClockGuard(t *testing.T) {
	sequencetest.RunClockGuard(t, func(t *testing.T) sequencetest.GuardStore {
		return newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	})
}
