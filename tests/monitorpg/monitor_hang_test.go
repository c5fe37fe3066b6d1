package monitorpg_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	_ "github.com/sngen/sn/backend/sql"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/server"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A catalog read that hangs (here: the catalog table locked by another
// transaction, as a migration or a long VACUUM FULL would) makes GET
// /v1/monitor hang for as long as the lock is held: series() reads the
// catalog with the request's context and no timeout, while health() (the
// store's ping, which still answers) is bounded by pingTimeout. /readyz
// answers at once.
func TestAdversaryMonitorHangsOnLockedCatalog(t *testing.T) {
	pg := pgtest.Shared(t)
	dsn := pg.NewDatabase(t)
	cfg, err := config.Decode([]byte(`
store: {backend: sql, ledger: "`+dsn+`"}
templates:
  orders: {template: "SN-@<seq>"}
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	s, err := server.New(set, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	resp, err := http.Post(ts.URL+"/v1/templates/orders/next", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("next: %v %v", err, resp)
	}
	resp.Body.Close()
	get := func(path string) (int, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+path, nil)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1, time.Since(start)
		}
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	if st, took := get("/v1/monitor"); st != 200 {
		t.Fatalf("monitor before the lock: %d in %v", st, took)
	}
	// Another session locks the table of records, where the catalog is (and holds it).
	db := pg.DB(t, dsn)
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE sn_ledger_kv IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	st, took := get("/readyz")
	t.Logf("/readyz: %d in %v", st, took)
	st, took = get("/v1/monitor")
	t.Logf("/v1/monitor: %d in %v", st, took)
	if st != 200 || took > 10*time.Second {
		t.Errorf("/v1/monitor with the table of records (the catalog) locked: status %d after %v (client gave up at 20s); readyz answered at once", st, took)
	}
}

func sharedPG(t *testing.T) *pgtest.Server { return pgtest.Shared(t) }
