package monitorpg_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	_ "github.com/sngen/sn/backend/sql"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// One catalog row whose time does not marshal to JSON (first_us in the
// year 10000) turns the whole of GET /v1/monitor into a 500 "the answer
// is not JSON", for as long as the row is there; a row whose spec is not
// JSON is shown as "(unreadable: ...)" (held up, the "spec" subtest).
func TestAdversaryMonitorCorruptCatalogRow(t *testing.T) {
	for _, row := range []string{"spec", "time"} {
		t.Run(row, func(t *testing.T) { corruptRow(t, row) })
	}
}

func corruptRow(t *testing.T, row string) {
	pg := sharedPG(t)
	dsn := pg.NewDatabase(t)
	cfg, _ := config.Decode([]byte(`
store: {backend: sql, ledger: "`+dsn+`"}
templates:
  orders: {template: "SN-@<seq>"}
`), "yaml")
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	s, _ := server.New(set, server.Options{})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	post := func() int {
		resp, err := http.Post(ts.URL+"/v1/templates/orders/next", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(); st != 200 {
		t.Fatalf("next %d", st)
	}
	db := pg.DB(t, dsn)
	qs := []string{`INSERT INTO sn_ledger_kv VALUES ('cat/e/x0', '{not json', 1)`}
	if row == "time" {
		qs = []string{
			// A well-formed row, but first_us in the year 10000 (a clock
			// far off, or a restore that shifted times): Entry.First does
			// not marshal to JSON, so the whole monitor answers 500.
			`INSERT INTO sn_ledger_kv VALUES ('cat/e/x1', '{"ID":"x1","Name":"bad","Spec":"{}","First":"10000-01-01T00:00:00Z","By":"me"}', 2)`,
		}
	}
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get(ts.URL + "/v1/monitor")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("monitor %d, %d bytes", resp.StatusCode, len(b))
	if resp.StatusCode != 200 {
		t.Errorf("monitor: %d %.300s", resp.StatusCode, b)
	}
	t.Logf("next after corrupt rows: %d", post())
}
