package sqlseq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn/sequence"
)

// Replication says which failovers of the ledger's server a Store
// accepts (Options.Replication).
type Replication string

const (
	// RequireSync, the default, accepts a server without standbys, and a
	// primary whose every standby is synchronous: a commit returns only
	// once a standby has it, so a failover to any of them loses no range
	// the ledger handed out.
	RequireSync Replication = ""
	// SingleServer declares that the ledger's server never fails over
	// to a standby: the Store does not look at its replication.
	SingleServer Replication = "single-server"
	// AcceptAsyncLoss accepts, by name, that a failover to a standby that
	// lagged loses the ranges the primary handed out last, and that they
	// are then handed out again: repeated numbers.
	AcceptAsyncLoss Replication = "accept-async-failover-loss"
)

// ErrAsyncReplication means the ledger's server replicates to a standby
// that a failover can promote without the ledger's last commits, so that
// the new primary hands out numbers again (see [Store.CheckReplication]).
var ErrAsyncReplication = errors.New("sqlseq: a failover of the ledger's server can lose its last commits")

// CheckReplication reads how the ledger's server replicates, and returns
// an error wrapping [ErrAsyncReplication] when a failover can lose the
// ranges it handed out last, unless Options.Replication accepts it: a
// primary with a standby that is not synchronous (an asynchronous one, a
// "potential" one, or a physical replication slot of one that is not
// connected), or whose commits do not wait for standbys
// (synchronous_commit off or local). A server that is itself a standby is
// refused, whatever Options.Replication says: it cannot be written to. The
// backends call it when they open a ledger, so that the hazard is an error
// at start-up, not repeated numbers after the next failover.
//
// PostgreSQL only: MySQL and MariaDB are not checked (see the package
// doc for their semi-synchronous replication).
func (s *Store) CheckReplication(ctx context.Context) error {
	if s.dialect != Postgres {
		return nil
	}
	var (
		recovery                 bool
		commit, names            string
		standbys, notSync, slots int
		hidden                   int
	)
	err := s.retry(ctx, "check the ledger's replication", func() error {
		return s.db.QueryRowContext(ctx, `SELECT pg_is_in_recovery(),
  current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
  (SELECT count(*) FROM pg_stat_replication),
  (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS DISTINCT FROM 'sync'),
  (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL),
  (SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'physical' AND NOT active)`).
			Scan(&recovery, &commit, &names, &standbys, &notSync, &hidden, &slots)
	})
	if err != nil {
		return err
	}
	if recovery {
		return fmt.Errorf("sqlseq: the ledger's server is a standby (pg_is_in_recovery): it cannot be written to; name the primary, or every server with target_session_attrs=read-write: %w", sequence.ErrInvalidArgument)
	}
	if s.replication != RequireSync || standbys+slots == 0 {
		return nil
	}
	var why []string
	switch {
	case hidden > 0:
		why = append(why, fmt.Sprintf("%d standbys whose state this user may not read (grant it pg_monitor)", hidden))
	case notSync > 0:
		why = append(why, fmt.Sprintf("%d of %d standbys are not synchronous (pg_stat_replication.sync_state)", notSync, standbys))
	}
	if slots > 0 {
		why = append(why, fmt.Sprintf("%d physical replication slots of standbys that are not connected, and so lag", slots))
	}
	if strings.TrimSpace(names) == "" {
		why = append(why, "synchronous_standby_names is empty")
	}
	if commit == "off" || commit == "local" {
		why = append(why, "synchronous_commit is "+commit)
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w (table %s): %s. A failover to such a standby hands out numbers again. "+
		"Make every standby synchronous (synchronous_standby_names naming them, synchronous_commit on or remote_apply), "+
		"or set Options.Replication (replication: in config) to %q if this server never fails over, or to %q to accept the risk",
		ErrAsyncReplication, s.table, strings.Join(why, "; "), SingleServer, AcceptAsyncLoss)
}
