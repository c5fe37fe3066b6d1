package sqlseq

import (
	"context"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
)

// Records returns the records of the Leaser's ledger (see
// [Store.Records]), where the catalog of its series is kept.
func (l *Leaser) Records() record.Store { return l.s.Records() }

// Claim claims an idempotency key in the Leaser's ledger (see
// [sequence.Replayer]), for the ids of a snowflake Gen that leases its
// worker there.
func (l *Leaser) Claim(ctx context.Context, id, digest, token string, lease time.Duration) (sequence.Claim, error) {
	return l.s.Claim(ctx, id, digest, token, lease)
}

// Settle records the answer of a claim in the Leaser's ledger.
func (l *Leaser) Settle(ctx context.Context, id, token, answer string, keep time.Duration) error {
	return l.s.Settle(ctx, id, token, answer, keep)
}
