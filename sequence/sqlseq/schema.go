package sqlseq

import (
	"context"
	"fmt"
	"strings"
)

// A DBA who keeps the right to create tables to the owners of a schema
// makes sn's tables with the statements of Schema, and gives the role sn
// connects as the rights of Grants. Migrate then creates nothing: it
// looks for each table with a query that reads no row, and creates only
// those it does not find.

// Schema returns the statements that make the Store's tables, each only
// if it does not exist, for a DBA to review and run as the tables' owner:
//
//   - the ledger (Options.Table): a row per counter key, its mark;
//   - its name and "_expiry": the deadlines of keys that expire;
//   - "_holds": the gapless numbers held and not yet committed;
//   - "_kv": the records (catalog, journals, idempotency keys, worker
//     leases);
//   - "_workers": a table that takes no row, in the place where releases
//     before the records kept worker leases, so that a process of such a
//     release started on this ledger fails instead of leasing ids beside
//     this one's;
//   - the record that says so, written only where that table is the one
//     made here: a ledger of an earlier release, whose "_workers" holds
//     leases, is left for Migrate to move (once, with a role that may
//     create tables);
//   - the record that says the ledger has none of the tables of an
//     earlier release, written only where none is found, so that Migrate
//     need not look for them (MySQL refuses a role that may not read a
//     table before it says whether the table exists).
//
// Run them in the ledger's database (on MySQL, after USE of it).
func (s *Store) Schema() []string {
	legacy := []string{"_records", "_catalog", "_journal", "_jhead", "_idem"}
	var moved, none string
	if s.dialect == Postgres {
		var regs []string
		for _, l := range legacy {
			regs = append(regs, "to_regclass('"+strings.ReplaceAll(strings.TrimSuffix(s.q.tables[0], `"`)+l+`"`, `'`, `''`)+"')")
		}
		none = `INSERT INTO ` + s.kvTable() + ` (k, v, ver)
SELECT convert_to('` + legacyNone + `', 'UTF8'), convert_to('made by its DDL', 'UTF8'), 1
WHERE COALESCE(` + strings.Join(regs, ", ") + `) IS NULL
ON CONFLICT (k) DO NOTHING`
		moved = `INSERT INTO ` + s.kvTable() + ` (k, v, ver)
SELECT convert_to('` + workersMoved + `', 'UTF8'), convert_to('fenced by its DDL', 'UTF8'), 1
WHERE EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass('` + strings.ReplaceAll(s.q.legacyWorkersTable, `'`, `''`) + `')
  AND conname = 'moved to the records: upgrade every process of sn')
ON CONFLICT (k) DO NOTHING`
	} else {
		schema, table := "DATABASE()", s.table+"_workers"
		if i := strings.LastIndexByte(s.table, '.'); i >= 0 {
			schema, table = "'"+s.table[:i]+"'", s.table[i+1:]+"_workers"
		}
		moved = `INSERT IGNORE INTO ` + s.kvTable() + ` (k, v, ver)
SELECT '` + workersMoved + `', 'fenced by its DDL', 1 FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ` + schema + ` AND TABLE_NAME = '` + table + `'
  AND TABLE_COMMENT = 'moved to the records: upgrade every process of sn'`
		base := strings.TrimSuffix(table, "_workers")
		var names []string
		for _, l := range legacy {
			names = append(names, "'"+base+l+"'")
		}
		none = `INSERT IGNORE INTO ` + s.kvTable() + ` (k, v, ver)
SELECT '` + legacyNone + `', 'made by its DDL', 1 FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM information_schema.TABLES
  WHERE TABLE_SCHEMA = ` + schema + ` AND TABLE_NAME IN (` + strings.Join(names, ", ") + `))`
	}
	return []string{s.q.create, s.q.createExpiry, s.q.createHolds, s.createKV(), s.q.fenceDDL, moved, none}
}

// Grants returns the statements that give role what a Store needs on the
// tables of [Store.Schema], and no more: to read and write the rows of
// the ledger, its expiry, its holds and its records, and to read the
// table that fences the earlier releases. role is written as it is
// (PostgreSQL: a role name; MySQL: 'user'@'host').
//
// On PostgreSQL, a table in a schema needs USAGE on it, and the check of
// replication ([Store.CheckReplication]) reads the state of each standby
// in pg_stat_replication, which a role sees only with pg_monitor (or
// pg_read_all_stats): without it, a server with standbys is refused, for
// their state is hidden. A server without standbys needs it not. MariaDB
// shows the status of semi-synchronous replication to every user.
func (s *Store) Grants(role string) []string {
	rw := append(s.q.tables[:3:3], s.kvTable())
	var out []string
	if s.dialect == Postgres {
		if i := strings.LastIndexByte(s.q.tables[0], '.'); i >= 0 {
			out = append(out, `GRANT USAGE ON SCHEMA `+s.q.tables[0][:i]+` TO `+role)
		}
		out = append(out,
			`GRANT SELECT, INSERT, UPDATE, DELETE ON `+strings.Join(rw, ", ")+` TO `+role,
			`GRANT SELECT ON `+s.q.tables[3]+` TO `+role,
			`GRANT pg_monitor TO `+role)
		return out
	}
	for _, t := range rw {
		out = append(out, `GRANT SELECT, INSERT, UPDATE, DELETE ON `+t+` TO `+role)
	}
	return append(out, `GRANT SELECT ON `+s.q.tables[3]+` TO `+role)
}

// ensureTables makes each table of the Store that does not exist, and
// touches none that does: a query that reads no row tells which, so that
// a role without the right to create tables runs on tables a DBA made
// (see [Store.Schema]).
func (s *Store) ensureTables(ctx context.Context) error {
	for _, t := range []struct{ name, create string }{
		{s.q.tables[0], s.q.create}, {s.q.tables[1], s.q.createExpiry}, {s.q.tables[2], s.q.createHolds}, {s.kvTable(), s.createKV()},
	} {
		_, err := s.db.ExecContext(ctx, `SELECT 1 FROM `+t.name+` WHERE 1 = 0`)
		if noTable(err) {
			if _, err = s.db.ExecContext(ctx, t.create); denied(err) {
				return fmt.Errorf("sqlseq: table %s does not exist, and this role may not create it: make the tables with the statements sn ddl prints (Store.Schema), as their owner, and give this role the rights it prints (Store.Grants): %w", t.name, err)
			}
		}
		if denied(err) {
			return fmt.Errorf("sqlseq: table %s: this role may not read it (or, on MySQL, may not learn whether it exists): make the tables with the statements sn ddl prints (Store.Schema), as their owner, and give this role the rights it prints (Store.Grants): %w", t.name, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// denied reports whether err says the role lacks a right: PostgreSQL's
// insufficient_privilege, MySQL's denials of a command or a table.
func denied(err error) bool {
	if err == nil {
		return false
	}
	switch mysqlNumber(err) {
	case "1142", "1044", "1045", "1227":
		return true
	}
	return sqlState(err) == "42501"
}
