package sqlseq

import "github.com/sngen/sn/sequence/record"

// Records returns the records of the Leaser's ledger (see
// [Store.Records]): the catalog of its series, and the claims of
// idempotency keys for the ids of a snowflake Gen that leases its worker
// there.
func (l *Leaser) Records() record.Store { return l.s.Records() }
