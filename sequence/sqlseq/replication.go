package sqlseq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sngen/sn/sequence"
)

// Replication says which failovers of the ledger's server a Store
// accepts (Options.Replication).
type Replication string

const (
	// RequireSync, the default, accepts a server that provably has no
	// standby (PostgreSQL: max_wal_senders = 0 and archive_mode off;
	// MySQL and MariaDB: no binary log), and a primary whose every
	// standby is synchronous (PostgreSQL's synchronous_standby_names,
	// MariaDB's semi-synchronous replication): a commit returns only once
	// a standby has it, so a failover to any of them loses no range the
	// ledger handed out. It is checked in every transaction that writes,
	// not once: see [Store.CheckReplication].
	RequireSync Replication = ""
	// SingleServer declares that the ledger's server never fails over
	// to a standby: the Store does not look at its replication. Declare
	// it for a server that keeps WAL or a binary log for backups, which
	// the Store cannot tell from one whose standby is away.
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

// errNoSyncStandby means the primary requires a synchronous standby and
// none is connected: a commit would wait for one. It is transient (a
// standby that restarts comes back), and classified as
// sequence.ErrUnavailable.
var errNoSyncStandby = errors.New("no synchronous standby is connected")

// errUnreplicated means a commit returned without a standby, or a
// replica, having it: what it reserved is a gap, and not tried again at
// once, so that the caller knows its reservation's fate is in doubt (a
// Segment then records the range as lost).
var errUnreplicated = fmt.Errorf("%w: committed without a synchronous standby", sequence.ErrUnavailable)

// CheckReplication reads how the ledger's server replicates, as every
// transaction of the Store that writes does before it commits, and
// returns what such a transaction would: nil, or an error wrapping
// [ErrAsyncReplication] when a failover could lose what it commits, or
// [sequence.ErrUnavailable] when the server waits for a synchronous
// standby and none is connected. The backends call it when they open a
// ledger, so that the hazard is an error at start-up; the Store checks
// again in each transaction, so that a standby that comes back
// asynchronous, or a setting changed and reloaded, stops the next range
// rather than repeating numbers after the next failover.
//
// With Options.Replication at [RequireSync], PostgreSQL is accepted
//
//   - alone, provably: max_wal_senders = 0 and archive_mode = off, so that
//     no standby can have its WAL (a server with wal_level = minimal is
//     one). A server that could have standbys and shows none connected
//     cannot be told from one whose asynchronous standby is away
//     (restarting, cut off, made by pg_basebackup without a slot): it is
//     refused, unless [SingleServer] declares it alone;
//   - or replicated synchronously: synchronous_standby_names is set, a
//     standby it names is connected and synchronous (sync_state sync or
//     quorum), and no other physical standby is connected (an
//     asynchronous or "potential" one lags), nor a physical slot of one
//     that is not (it lags too). The transaction raises its own
//     synchronous_commit to on (or keeps remote_apply), so that a role's
//     or database's off or local cannot make its commit return before a
//     standby has it. The ledger's user needs pg_monitor to read the
//     standbys' state. Walsenders of logical slots are not standbys.
//
// MariaDB is accepted alone, provably (log_bin OFF), or with
// semi-synchronous replication: rpl_semi_sync_master_enabled ON,
// rpl_semi_sync_master_wait_point AFTER_SYNC, its status ON, a
// semi-synchronous replica connected and no other (Slaves_connected at
// most Rpl_semi_sync_master_clients). After each commit the Store reads
// the status again: a primary that gave up waiting
// (rpl_semi_sync_master_timeout) turns it OFF and commits anyway, and the
// range is then refused (a gap), not handed out. MySQL (not MariaDB) with
// a binary log is refused unless Options.Replication says otherwise: its
// semi-synchronous replication is not checked.
//
// A server that is itself a standby, or read-only, is refused whatever
// Options.Replication says: it cannot be written to.
func (s *Store) CheckReplication(ctx context.Context) error {
	err := s.retry(ctx, "check the ledger's replication", func() error {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		_, err = s.guardRaw(ctx, tx, true)
		return err
	})
	return err
}

// after is what [Store.commit] checks once a commit returned: that a
// standby, or a replica, has it. A commit that waited for one can be let
// go without it (PostgreSQL: synchronous_standby_names emptied, the
// backend cancelled, with a WARNING only; MariaDB: KILL QUERY, or the
// semi-synchronous timeout), and what it reserved must then not be used.
type after struct {
	pg    bool  // PostgreSQL with synchronous standbys
	maria bool  // MariaDB with semi-synchronous replication
	noTx  int64 // MariaDB: Rpl_semi_sync_master_no_tx before the commit
}

// guard checks, in tx, that what tx commits cannot be lost by a failover
// (see [Store.CheckReplication]), and raises tx's synchronous_commit on
// PostgreSQL. It returns what to check after the commit ([Store.commit]).
func (s *Store) guard(ctx context.Context, tx execer) (after, error) {
	return s.guardRaw(ctx, tx, false)
}

func (s *Store) guardRaw(ctx context.Context, tx execer, always bool) (after, error) {
	if s.replication != RequireSync && !always {
		return after{}, nil
	}
	if s.dialect == Postgres {
		return s.guardPostgres(ctx, tx)
	}
	return s.guardMySQL(ctx, tx)
}

// pgGuard raises the transaction's synchronous_commit and reads, in the
// same round trip, what decides whether its commit can be lost.
const pgGuard = `SELECT set_config('synchronous_commit',
    CASE current_setting('synchronous_commit') WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true),
  pg_is_in_recovery(),
  current_setting('max_wal_senders')::int = 0 AND current_setting('archive_mode') = 'off',
  current_setting('synchronous_standby_names'),
  count(*),
  count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')),
  count(*) FILTER (WHERE sync_state IS NULL),
  count(*) FILTER (WHERE sync_state NOT IN ('sync', 'quorum') AND state IS DISTINCT FROM 'backup'),
  (SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'physical' AND NOT active)
FROM (SELECT sync_state, state FROM pg_stat_replication
  WHERE pid NOT IN (SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)) r`

func (s *Store) guardPostgres(ctx context.Context, tx execer) (after, error) {
	var (
		commit, names                          string
		recovery, alone                        bool
		standbys, sync, hidden, notSync, slots int
	)
	if err := tx.QueryRowContext(ctx, pgGuard).Scan(&commit, &recovery, &alone, &names, &standbys, &sync, &hidden, &notSync, &slots); err != nil {
		return after{}, err
	}
	if recovery {
		return after{}, fmt.Errorf("sqlseq: the ledger's server is a standby (pg_is_in_recovery): it cannot be written to; name the primary, or every server with target_session_attrs=read-write: %w", sequence.ErrInvalidArgument)
	}
	if s.replication != RequireSync || alone && standbys == 0 {
		return after{}, nil
	}
	names = strings.TrimSpace(names)
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
	if names == "" {
		if standbys == 0 && len(why) == 0 {
			why = append(why, "synchronous_standby_names is empty and the server could have standbys "+
				"(max_wal_senders > 0 or archive_mode on): one that is away now cannot be told from none")
		} else {
			why = append(why, "synchronous_standby_names is empty")
		}
	}
	if len(why) > 0 {
		return after{}, fmt.Errorf("%w (table %s): %s. A failover to such a standby hands out numbers again. "+
			"Make every standby synchronous (synchronous_standby_names naming them), "+
			"or set Options.Replication (replication: in config) to %q if this server never fails over, or to %q to accept the risk",
			ErrAsyncReplication, s.table, strings.Join(why, "; "), SingleServer, AcceptAsyncLoss)
	}
	if sync == 0 {
		return after{}, fmt.Errorf("%w: synchronous_standby_names is %q and none of them is connected: a commit would wait for one", errNoSyncStandby, names)
	}
	return after{pg: true}, nil
}

// pgReplicated reads, after a commit, the server's WAL flushed so far
// (which holds the commit) and whether a synchronous standby has flushed
// it too.
const pgReplicated = `SELECT pg_current_wal_flush_lsn()::text,
  EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') AND flush_lsn >= pg_current_wal_flush_lsn())`

// pgCaughtUp reads whether a synchronous standby has flushed the WAL up to
// $1.
const pgCaughtUp = `SELECT EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') AND flush_lsn >= $1::pg_lsn)`

// replicatedWait bounds how long commit waits, after a commit returned,
// for a synchronous standby to report the WAL that holds it: it did
// before the commit returned, unless the wait was let go.
const replicatedWait = 2 * time.Second

// checkPostgres checks, after a commit returned, that a synchronous
// standby has it: PostgreSQL lets a commit go without one, with a
// WARNING only, when synchronous_standby_names is emptied or the backend
// cancelled while it waits.
func (s *Store) checkPostgres(ctx context.Context) error {
	var lsn string
	var ok bool
	if err := s.db.QueryRowContext(ctx, pgReplicated).Scan(&lsn, &ok); err != nil {
		return fmt.Errorf("sqlseq: committed, but whether a standby has it is not known: %w", err)
	}
	wait := time.Millisecond
	for deadline := time.Now().Add(replicatedWait); !ok; wait = min(2*wait, 100*time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (table %s): the commit returned, and no synchronous standby reports the WAL that holds it (%s) after %v: "+
				"the wait for it was let go (synchronous_standby_names emptied, the backend cancelled): what it reserved is not used",
				errUnreplicated, s.table, lsn, replicatedWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlseq: committed, but whether a standby has it is not known: %w", ctx.Err())
		case <-time.After(wait):
		}
		if err := s.db.QueryRowContext(ctx, pgCaughtUp, lsn).Scan(&ok); err != nil {
			return fmt.Errorf("sqlseq: committed, but whether a standby has it is not known: %w", err)
		}
	}
	return nil
}

// mariaDB tells MariaDB from MySQL, once per Store.
func (s *Store) mariaDB(ctx context.Context, tx execer) (bool, error) {
	if v := s.flavor.Load(); v != 0 {
		return v == 1, nil
	}
	var version string
	if err := tx.QueryRowContext(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return false, err
	}
	maria := strings.Contains(strings.ToLower(version), "mariadb")
	if maria {
		s.flavor.Store(1)
	} else {
		s.flavor.Store(2)
	}
	return maria, nil
}

// mariaSettings reads MariaDB's settings that decide whether a commit can
// be lost by a failover: cheap, for a server without a binary log needs
// nothing more.
const mariaSettings = `SELECT @@global.log_bin, @@global.read_only,
  @@global.rpl_semi_sync_master_enabled, @@global.rpl_semi_sync_master_wait_point`

// mariaReplicas reads, for a server that writes a binary log, whether its
// primary waits for a semi-synchronous replica now, and how many replicas
// of each kind are connected.
const mariaReplicas = `SELECT
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS' THEN VARIABLE_VALUE END), 'OFF'),
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS' THEN VARIABLE_VALUE END), '0'),
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'SLAVES_CONNECTED' THEN VARIABLE_VALUE END), '0'),
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_NO_TX' THEN VARIABLE_VALUE END), '0')
FROM information_schema.GLOBAL_STATUS
WHERE VARIABLE_NAME IN ('RPL_SEMI_SYNC_MASTER_STATUS', 'RPL_SEMI_SYNC_MASTER_CLIENTS', 'SLAVES_CONNECTED', 'RPL_SEMI_SYNC_MASTER_NO_TX')`

// mariaStatus reads, after a commit, whether MariaDB's primary waits for
// a replica now, and how many commits no replica acknowledged so far.
const mariaStatus = `SELECT
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS' THEN VARIABLE_VALUE END), 'OFF'),
  COALESCE(MAX(CASE WHEN VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_NO_TX' THEN VARIABLE_VALUE END), '0')
FROM information_schema.GLOBAL_STATUS
WHERE VARIABLE_NAME IN ('RPL_SEMI_SYNC_MASTER_STATUS', 'RPL_SEMI_SYNC_MASTER_NO_TX')`

func (s *Store) guardMySQL(ctx context.Context, tx execer) (after, error) {
	maria, err := s.mariaDB(ctx, tx)
	if err != nil {
		return after{}, err
	}
	if !maria {
		var binlog, readOnly bool
		if err := tx.QueryRowContext(ctx, `SELECT @@global.log_bin, @@global.read_only`).Scan(&binlog, &readOnly); err != nil {
			return after{}, err
		}
		if readOnly {
			return after{}, fmt.Errorf("sqlseq: the ledger's server is read-only (read_only = ON), as a replica is: it cannot be written to; name the primary: %w", sequence.ErrInvalidArgument)
		}
		if s.replication != RequireSync || !binlog {
			return after{}, nil
		}
		return after{}, fmt.Errorf("%w (table %s): the server writes a binary log (log_bin = ON), which replicas read, and sn checks semi-synchronous replication on MariaDB only. "+
			"Set Options.Replication (replication: in config) to %q if this server never fails over, or to %q to accept the risk",
			ErrAsyncReplication, s.table, SingleServer, AcceptAsyncLoss)
	}
	var (
		binlog, readOnly, enabled bool
		point, status             string
		clients, slaves           int
		noTx                      int64
	)
	if err := tx.QueryRowContext(ctx, mariaSettings).Scan(&binlog, &readOnly, &enabled, &point); err != nil {
		return after{}, err
	}
	if readOnly {
		return after{}, fmt.Errorf("sqlseq: the ledger's server is read-only (read_only = ON), as a replica is: it cannot be written to; name the primary: %w", sequence.ErrInvalidArgument)
	}
	if s.replication != RequireSync || !binlog {
		return after{}, nil
	}
	// (Read apart: @@global.log_bin reads 0 in an aggregate query on
	// MariaDB 10.11.)
	if err := tx.QueryRowContext(ctx, mariaReplicas).Scan(&status, &clients, &slaves, &noTx); err != nil {
		return after{}, err
	}
	var why []string
	if !enabled {
		why = append(why, "rpl_semi_sync_master_enabled is OFF")
	} else if point != "AFTER_SYNC" {
		why = append(why, "rpl_semi_sync_master_wait_point is "+point)
	}
	if slaves > clients && len(why) == 0 {
		why = append(why, fmt.Sprintf("%d replicas are connected and %d of them are semi-synchronous (Slaves_connected, Rpl_semi_sync_master_clients)", slaves, clients))
	}
	if len(why) > 0 {
		return after{}, fmt.Errorf("%w (table %s): the server writes a binary log, which replicas read, and %s. A failover to a replica that lagged hands out numbers again. "+
			"Make replication semi-synchronous (rpl_semi_sync_master_enabled = ON, rpl_semi_sync_master_wait_point = AFTER_SYNC, rpl_semi_sync_slave_enabled = ON on every replica), "+
			"or set Options.Replication (replication: in config) to %q if this server never fails over, or to %q to accept the risk",
			ErrAsyncReplication, s.table, strings.Join(why, "; "), SingleServer, AcceptAsyncLoss)
	}
	if status != "ON" || clients == 0 {
		return after{}, fmt.Errorf("%w: semi-synchronous replication is on and Rpl_semi_sync_master_status is %s with %d replicas: a commit would not reach one", errNoSyncStandby, status, clients)
	}
	return after{maria: true, noTx: noTx}, nil
}

// begin starts a transaction that writes, and checks in it that its
// commit cannot be lost by a failover (guard); [Store.commit] commits it.
func (s *Store) begin(ctx context.Context) (*sql.Tx, after, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, after{}, err
	}
	a, err := s.guard(ctx, tx)
	if err != nil {
		tx.Rollback()
		return nil, after{}, err
	}
	return tx, a, nil
}

// syncWait explains err, of a statement of a transaction begun by begin,
// when ctx ended first on a server whose commits wait for a synchronous
// standby (a): the statement most likely waited for the key's row, which
// a commit waiting for a standby that stopped answering holds.
func (s *Store) syncWait(ctx context.Context, a after, err error) error {
	if ctx.Err() == nil || !a.pg && !a.maria {
		return err
	}
	return fmt.Errorf("the context ended in the transaction, most likely waiting for the key's row, which a commit waiting for a synchronous standby holds "+
		"(a standby that stopped answering shows as connected until wal_sender_timeout; MariaDB: rpl_semi_sync_master_timeout): %w", err)
}

// commit commits tx, begun by begin, and then checks what the guard asked
// for (a): that a synchronous standby, or a semi-synchronous replica,
// has the commit. A commit let go without one committed what a failover
// can lose, and what it reserved must not be used: commit returns an
// error wrapping errUnreplicated (the range is a gap).
func (s *Store) commit(ctx context.Context, tx *sql.Tx, a after) error {
	if err := tx.Commit(); err != nil {
		if (a.pg || a.maria) && ctx.Err() != nil {
			return fmt.Errorf("%w (table %s): the commit waited for a synchronous standby until the context ended, "+
				"and may have committed without one: what it reserved is not used. "+
				"A standby that stopped answering shows as connected until wal_sender_timeout (MariaDB: rpl_semi_sync_master_timeout): %w",
				errUnreplicated, s.table, err)
		}
		return err
	}
	switch {
	case a.pg:
		return s.checkPostgres(ctx)
	case a.maria:
		var status string
		var noTx int64
		if err := s.db.QueryRowContext(ctx, mariaStatus).Scan(&status, &noTx); err != nil {
			return fmt.Errorf("sqlseq: committed, but whether a replica has it is not known: %w", err)
		}
		if status != "ON" {
			return fmt.Errorf("%w (table %s): the primary stopped waiting for a semi-synchronous replica (Rpl_semi_sync_master_status %s, after rpl_semi_sync_master_timeout), "+
				"and committed what a failover can lose: it is not used", errUnreplicated, s.table, status)
		}
		if noTx > a.noTx {
			return fmt.Errorf("%w (table %s): %d commits went without a replica's acknowledgement since this one began (Rpl_semi_sync_master_no_tx; a wait killed, KILL QUERY): "+
				"this one may be among them, and what it reserved is not used", errUnreplicated, s.table, noTx-a.noTx)
		}
	}
	return nil
}

// write runs fn in a transaction that writes (begin, commit), retried.
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	return s.retry(ctx, what, func() error {
		tx, after, err := s.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return s.commit(ctx, tx, after)
	})
}
