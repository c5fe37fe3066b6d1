package etcdseq_test

import (
	"github.com/sngen/sn/internal/guardtest"

	"testing"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/sequence/etcdseq"
)

// The retention guard over an etcd ledger: counters per second expire by
// the Store's clock (guardtest.Run).
func TestClockGuard(t *testing.T) {
	guardtest.Run(t, func(t *testing.T) guardtest.Store {
		return newStore(t, etcdtest.Shared(t), etcdseq.Options{})
	})
}
