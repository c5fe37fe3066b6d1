package sqlseq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/sqlseq"
)

// The claim and the settle of one idempotency key, a new key each time:
// what a keyed request adds on a SQL ledger.
//
//	go test -run '^$' -bench ClaimSettle ./tests/sqlseq
func BenchmarkClaimSettle(b *testing.B) {
	ctx := context.Background()
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			rp := replayerOf(newStore(b, be, be.open(b), sqlseq.Options{}))
			i := 0
			for b.Loop() {
				i++
				id := "bench\x00" + strconv.Itoa(i)
				if _, err := rp.Claim(ctx, id, "d", "tok", time.Minute); err != nil {
					b.Fatal(err)
				}
				if err := rp.Settle(ctx, id, "tok", `["SN-1"]`, time.Hour); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func replayerOf(s *sqlseq.Store) claim.Replayer { return claim.Of(s) }
