package main

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/sngen/sn/sequence/sqliteseq"
	"github.com/sngen/sn/sequence/sqlseq"
)

// cmdDDL prints the statements that make a store's tables, and those that
// give the role sn connects as what it needs on them: for a DBA who makes
// the tables and keeps the right to create them.
func cmdDDL(e *env, args []string) error {
	f := newFlags("ddl")
	ledger := f.fs.String("ledger", "", "")
	dialect := f.fs.String("dialect", "", "")
	table := f.fs.String("table", sqlseq.DefaultTable, "")
	role := f.fs.String("role", "", "")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("ddl", "unexpected argument %q (give the ledger as --ledger DSN, or the database as --dialect)", pos[0])
	}
	d := strings.ToLower(*dialect)
	if *ledger != "" {
		if d != "" {
			return usagef("ddl", "give --ledger or --dialect, not both: the ledger's URL says its database")
		}
		scheme, _, _ := strings.Cut(strings.ToLower(*ledger), "://")
		d = scheme
	}
	var stmts, grants []string
	switch d {
	case "postgres", "postgresql", "mysql", "mariadb":
		sd := sqlseq.Postgres
		if d == "mysql" || d == "mariadb" {
			sd = sqlseq.MySQL
		}
		// New checks its arguments and never uses the DB.
		s, err := sqlseq.New(new(sql.DB), sd, sqlseq.Options{Table: *table})
		if err != nil {
			return usagef("ddl", "--table %q: want a name such as sn_ledger or billing.sn_ledger (letters, digits and \"_\")", *table)
		}
		stmts = s.Schema()
		if *role != "" {
			grants = s.Grants(*role)
		}
	case "sqlite":
		if *table != sqlseq.DefaultTable || *role != "" {
			return usagef("ddl", "a SQLite file has fixed table names and no roles: drop --table and --role")
		}
		stmts = sqliteseq.Schema()
	case "":
		return usagef("ddl", "say which database: --ledger DSN, or --dialect postgres, mysql or sqlite")
	default:
		return usagef("ddl", "%q: want a postgres://, postgresql:// or mysql:// ledger, or --dialect postgres, mysql or sqlite", d)
	}
	where := "in the ledger's database"
	if d == "mysql" || d == "mariadb" {
		where += " (USE it first)"
	}
	if d == "sqlite" {
		where = "in the store's file"
	}
	fmt.Fprintf(e.out, "-- sn's tables: run as their owner, %s. Each statement makes only\n-- what does not exist; sn then creates nothing.\n", where)
	for _, s := range stmts {
		fmt.Fprintf(e.out, "%s;\n\n", s)
	}
	if len(grants) > 0 {
		fmt.Fprintf(e.out, "-- What %s needs on them, and no more.\n", *role)
		for _, g := range grants {
			fmt.Fprintf(e.out, "%s;\n", g)
		}
	} else if d != "sqlite" {
		fmt.Fprintf(e.out, "-- Give --role ROLE for the grants of the role sn connects as.\n")
	}
	return nil
}
