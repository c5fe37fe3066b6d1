package main

import (
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The statements sn ddl prints, run by a DBA as the tables' owner, and
// its grants given to a role that may do nothing else: sn next, through
// the ledger as that role, issues numbers. The control: the same role on a
// database whose tables were not made fails, and says to run sn ddl.
func TestDDL(t *testing.T) {
	for _, l := range ledgers(t)[:2] {
		t.Run(l.name, func(t *testing.T) {
			u, err := url.Parse(l.url)
			if err != nil {
				t.Fatal(err)
			}
			driver, dsn := "pgx", l.url
			if l.name == "mariadb" {
				pw, _ := u.User.Password()
				driver, dsn = "mysql", fmt.Sprintf("%s:%s@tcp(%s)%s", u.User.Username(), pw, u.Host, u.Path)
			}
			admin, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			name := fmt.Sprintf("sn_ddl_%d", time.Now().UnixNano()%1e9)
			role := name
			if l.name == "mariadb" {
				role = "'" + name + "'@'%'"
				mustExec(t, admin, `CREATE USER `+role+` IDENTIFIED BY 'pw'`)
				t.Cleanup(func() { admin.Exec(`DROP USER ` + role) })
			} else {
				mustExec(t, admin, `CREATE ROLE `+name+` LOGIN PASSWORD 'pw'`)
				mustExec(t, admin, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`)
				t.Cleanup(func() {
					admin.Exec(`DROP OWNED BY ` + name)
					admin.Exec(`DROP ROLE ` + name)
				})
			}
			as := *u
			as.User = url.UserPassword(name, "pw")

			r := runSN(t, "", nil, "next", "-t", "INV-@<seq, width=6>", "--ledger", as.String(), "-n", "1")
			if r.code == 0 || !strings.Contains(r.stderr, "sn ddl") {
				t.Fatalf("control: sn next as a role that may not create tables, with none made: exit %d: %s", r.code, r.stderr)
			}

			out := strings.Join(ok(t, "ddl", "--ledger", l.url, "--role", role), "\n")
			var n int
			for _, stmt := range strings.Split(out, ";\n") {
				var code []string
				for _, line := range strings.Split(stmt, "\n") {
					if !strings.HasPrefix(strings.TrimSpace(line), "--") {
						code = append(code, line)
					}
				}
				if c := strings.TrimSpace(strings.Join(code, "\n")); c != "" {
					mustExec(t, admin, c)
					n++
				}
			}
			if n < 8 {
				t.Fatalf("sn ddl printed %d statements:\n%s", n, out)
			}
			got := ok(t, "next", "-t", "INV-@<seq, width=6>", "--ledger", as.String(), "-n", "3")
			if !cmp.Equal(got, []string{"INV-000001", "INV-000002", "INV-000003"}) {
				t.Errorf("sn next as the role: %v", got)
			}
			t.Logf("%d statements; the role issues %v", n, got)
		})
	}
}

func mustExec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
