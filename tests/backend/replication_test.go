package backend_test

import (
	"strings"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/pgtest"
)

// A Build refuses a PostgreSQL ledger whose primary replicates to a standby
// that is not synchronous, unless replication accepts it.
func TestLedgerReplication(t *testing.T) {
	primary := pgtest.StartPrimary(t)
	standby := pgtest.StartStandby(t, primary)
	ledger := pgtest.MultiHostDSN("postgres", primary, standby)
	build := func(replication string) error {
		opts := config.Options{"ledger": ledger}
		if replication != "" {
			opts["replication"] = replication
		}
		cfg := &config.Config{Store: config.Sequence{Backend: "sql", Options: opts}, Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
		set, err := cfg.Build(t.Context())
		if err == nil {
			set.Close()
		}
		return err
	}
	if err := build(""); err == nil || !strings.Contains(err.Error(), "a failover of the ledger's server can lose its last commits") || !strings.Contains(err.Error(), "1 of 1 standbys are not synchronous") {
		t.Errorf("Build over a primary with an asynchronous standby: %v", err)
	}
	if err := build("accept-async-failover-loss"); err != nil {
		t.Errorf("Build with the risk accepted: %v", err)
	}
	cfg := &config.Config{Store: config.Sequence{Backend: "sql", Options: config.Options{"ledger": ledger, "replication": "maybe"}}, Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `replication "maybe": want single-server or accept-async-failover-loss`) {
		t.Errorf("Validate with replication: maybe: %v", err)
	}
}
