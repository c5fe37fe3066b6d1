package config

import "testing"

// A well-known backend whose package is not imported says which to
// import.
func TestUnknownElsewhere(t *testing.T) {
	elsewhere["duckdb"] = "example.com/duckdb"
	defer delete(elsewhere, "duckdb")
	want := `unknown (want bolt, memory, snowflake, sql; import _ "example.com/duckdb" for duckdb)`
	if got := unknown("duckdb"); got != want {
		t.Errorf("unknown = %s, want %s", got, want)
	}
}

// A database named as a backend says how to make it the sql backend's
// ledger, and which package registers sql when it is not imported.
func TestUnknownDatabase(t *testing.T) {
	want := `unknown (want bolt, memory, snowflake, sql; for MariaDB, set backend: sql and ledger: mysql://user:password@host:3306/db)`
	if got := unknown("MariaDB"); got != want {
		t.Errorf("unknown = %s, want %s", got, want)
	}
	sql := drivers["sql"]
	driversMu.Lock()
	delete(drivers, "sql")
	driversMu.Unlock()
	defer func() {
		driversMu.Lock()
		drivers["sql"] = sql
		driversMu.Unlock()
	}()
	want = `unknown (want bolt, memory, snowflake; for pg, set backend: sql (import _ "github.com/sngen/sn/backend/sql") and ledger: postgres://user:password@host:5432/db)`
	if got := unknown("pg"); got != want {
		t.Errorf("unknown = %s, want %s", got, want)
	}
}
