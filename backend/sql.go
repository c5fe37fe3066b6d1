package backend

import (
	"context"
	"fmt"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// sqlDriver is the sql backend: blocks of numbers reserved from a ledger
// table in PostgreSQL or MySQL (sqlseq), served through a
// sequence.Segment.
type sqlDriver struct{}

// Check requires a ledger; the store is the ledger and its table.
func (sqlDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: append(append([]string(nil), ledgerFields...), segmentFields...)}
	s, err := decode(t)
	if err != nil {
		return st, err
	}
	if err := checkLedger(s, "sql", true); err != nil {
		return st, err
	}
	if l, _ := parseLedger(s.Ledger); l.etcd != nil {
		return st, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: an etcd cluster: set backend: etcd", l.shown)}
	}
	st.ID = "sql " + ledgerID(s)
	return st, nil
}

// Open opens the ledger, or shares the one the Build has open.
func (sqlDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	store, err := openLedger(ctx, t)
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}
