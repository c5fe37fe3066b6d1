// Package sql registers the "sql" backend of package
// github.com/sngen/sn/config, and the ledgers whose URLs are postgres://,
// postgresql:// and mysql://, which the backends that serve numbers in
// front of a ledger (redis, redis-strict, snowflake) take as a value from
// config.OpenLedger. Import it for its side effect, with the database/sql
// driver of the database:
//
//	import (
//		_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL
//		_ "github.com/sngen/sn/backend/sql"
//	)
//
// A sql sequence reserves blocks of numbers from a ledger table (package
// sequence/sqlseq), one statement per block, served through a
// sequence.Segment. It reads ledger (required), table, replication and
// the steps of its Segment: step, min_step, max_step, prefetch, target,
// fetch_timeout and idle.
//
// A template whose profile is gapless or fr-continuous gets the ledger's
// gapless sequence instead (sqlseq.Store.Gapless): each number drawn in
// a transaction, with its journal record, never from a block. It reads
// ledger, table, replication and fetch_timeout. sn serve and the sn
// command run each request in one transaction (sn.Generator.Transact),
// and serve holds, commits and voids of holds; a program that builds the
// config draws in its own transactions (sqlseq.WithTx) or in Transact.
//
// # Ledgers
//
// A ledger is a table in PostgreSQL or MySQL that records every number
// handed out, shared by every machine that issues numbers. Its ledger
// field is a URL:
//
//	postgres://user:password@host:5432/db?sslmode=disable   PostgreSQL, through the "pgx" driver (or postgresql://)
//	mysql://user:password@host:3306/db                      MySQL 8 or MariaDB 10.5+, through the "mysql" driver
//
// This package links no database client: the program imports the
// database/sql driver it uses, github.com/jackc/pgx/v5/stdlib (or lib/pq,
// "postgres") for PostgreSQL, github.com/go-sql-driver/mysql for MySQL.
// A ledger whose driver is not linked is refused when the config is
// checked, with the import to add. A mysql URL becomes the driver's DSN,
// user:password@tcp(host:3306)/db?parseTime=true, its query the DSN's
// parameters. The table (table, default "sn_ledger", optionally qualified
// by a schema, "billing.sn_ledger") is created when a Build first opens
// the ledger, within fetch_timeout. A Build opens one *sql.DB per URL, one
// sqlseq.Store per table.
//
// A ledger's replication is read then, and again in every transaction
// that writes (sqlseq.Store.CheckReplication): a server that could have a
// standby that is not synchronous (PostgreSQL), or a replica that is not
// semi-synchronous (MariaDB), is refused, for a failover to a standby that
// lagged hands out again the numbers the primary handed out last. A
// server provably alone (no WAL sender, no binary log) is accepted. Make
// the standbys synchronous, or set replication: single-server (the server
// never fails over) or replication: accept-async-failover-loss. Name every
// server of a replicated ledger, with target_session_attrs=read-write, so
// that a failover is followed:
//
//	postgres://sn:secret@db1:5432,db2:5432/orders?target_session_attrs=read-write
package sql

import (
	"context"
	"fmt"
	"slices"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

func init() {
	config.Register("sql", driver{})
	for _, scheme := range []string{"postgres", "postgresql", "mysql"} {
		config.RegisterLedger(scheme, ledgerDriver{})
	}
}

// fields are a sql sequence's own fields, and those of a ledger in front
// of which another backend serves.
type fields struct {
	// Ledger is the database URL; see "Ledgers".
	Ledger string `yaml:"ledger"`

	// Table is the ledger's table, optionally qualified by a schema
	// ("billing.sn_ledger"): letters, digits and "_". Default: sn_ledger.
	Table string `yaml:"table"`

	// Replication says which failovers of the ledger's server are
	// accepted: by default a server that could have a standby that is not
	// synchronous is refused when the ledger is opened and at every write
	// (sqlseq.Store.CheckReplication). "single-server" declares that the
	// server never fails over; "accept-async-failover-loss" accepts that
	// risk by name.
	Replication string `yaml:"replication"`
}

// driver is the sql backend.
type driver struct{}

// Check requires a ledger of this package's; the store is the ledger and
// its table.
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: slices.Concat([]string{"ledger"}, ledgerFields, config.SegmentFields())}
	var f fields
	if err := t.Decode(&f); err != nil {
		return st, err
	}
	if f.Ledger == "" {
		return st, config.Missing("ledger", "sql", "a ledger, a database URL such as "+forms)
	}
	l, err := parse(f.Ledger)
	if err != nil {
		if isEtcd(f.Ledger) {
			err = fmt.Errorf("an etcd cluster: set backend: etcd (import _ %q)", "github.com/sngen/sn/backend/etcd")
		}
		return st, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", config.Redact(f.Ledger), err)}
	}
	info, err := check(t, f, l)
	if err != nil {
		return st, err
	}
	st.ID = "sql " + info.ID
	if t.Gapless() {
		// Drawn one at a time in a transaction: no blocks to size.
		st.Gapless = true
		st.Fields = slices.Concat([]string{"ledger", "fetch_timeout"}, ledgerFields)
	}
	return st, nil
}

// Open opens the ledger, or shares the one the Build has open.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	var f fields
	t.Decode(&f) // Check accepted it
	store, err := open(ctx, t, f.Ledger)
	if err != nil {
		return nil, err
	}
	if t.Gapless() {
		return store.Gapless(), nil
	}
	return config.Serve(t, store)
}
