package backend_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
)

// etcdPrefixes numbers the ledgers the tests make in the shared cluster.
var etcdPrefixes atomic.Int64

// etcdLedger returns an etcd:// URL of a ledger of the test's own in the
// shared cluster.
func etcdLedger(t *testing.T) string {
	c := etcdtest.Shared(t)
	var hosts []string
	for _, ep := range c.Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(ep, "http://"))
	}
	return fmt.Sprintf("etcd://%s/test-%d/", strings.Join(hosts, ","), etcdPrefixes.Add(1))
}

// The etcd backend keeps its counters in the cluster: numbers continue
// across Builds; redis and redis-strict reserve their ranges from an etcd
// ledger, and a Redis that lost its data costs a gap, never a repeat.
func TestEtcd(t *testing.T) {
	ledger := etcdLedger(t)
	srv := redistest.Start(t) // no persistence: a restart is empty
	cfg := &config.Config{
		Store: config.Sequence{Backend: "etcd", Step: 10, Options: config.Options{"ledger": ledger}},
		Templates: map[string]config.Template{
			"a":      {Template: "A@<seq>", Floor: 300},
			"cached": {Template: "C@<seq>", Sequence: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger}}},
			"strict": {Template: "S@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Step: 5, Options: config.Options{"url": "redis://" + srv.Addr(), "ledger": ledger}}},
		},
	}
	cfg.Templates["ids"] = config.Template{Template: "I@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"ledger": ledger}}}
	seen := map[string]bool{}
	prev := map[string]int64{"a": 300}
	for run := range 3 {
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range issue(t, set, "ids", 5) { // a worker id leased from etcd
			if seen[s] {
				t.Fatalf("run %d: %s issued twice", run, s)
			}
			seen[s] = true
		}
		for _, name := range []string{"a", "cached", "strict"} {
			for _, s := range issue(t, set, name, 12) {
				if seen[s] {
					t.Fatalf("run %d: %s issued twice", run, s)
				}
				seen[s] = true
				n := seqOf(t, s, strings.ToUpper(name[:1]))
				if n <= prev[name] {
					t.Errorf("run %d: %s: %d after %d", run, name, n, prev[name])
				}
				prev[name] = n
			}
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		srv.Kill(t) // Redis loses everything between runs
		srv.Restart(t)
	}
}

// An etcd ledger is refused at Check where it cannot serve, and a cluster
// that does not answer is an error of Build, within fetch_timeout.
func TestEtcdRefused(t *testing.T) {
	ledger := etcdLedger(t)
	for _, tt := range []struct {
		name string
		seq  config.Sequence
		want string
	}{
		{"no ledger", config.Sequence{Backend: "etcd"}, "the etcd backend needs a ledger"},
		{"a SQL ledger", config.Sequence{Backend: "etcd", Options: config.Options{"ledger": "postgres://u:p@h/db"}}, "the etcd backend takes an etcd URL"},
		{"sql with etcd", config.Sequence{Backend: "sql", Options: config.Options{"ledger": ledger}}, "an etcd cluster: set backend: etcd"},
		{"a table", config.Sequence{Backend: "etcd", Options: config.Options{"ledger": ledger, "table": "t"}}, `store.table: not used by the backend of any template (etcd)`},
		{"bad parameter", config.Sequence{Backend: "etcd", Options: config.Options{"ledger": "etcd://h:2379?x=1"}}, `unknown parameter "x"`},
		{"TLS files without TLS", config.Sequence{Backend: "etcd", Options: config.Options{"ledger": "etcd://h:2379?ca=/ca.pem"}}, "use etcds://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Store: tt.seq, Templates: map[string]config.Template{"a": {Template: "A@<seq>"}}}
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate: %v\nwant it to say %q", err, tt.want)
			}
		})
	}
	// redis reads a table, for a SQL ledger: with an etcd one it is refused.
	cfg := &config.Config{Templates: map[string]config.Template{"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://127.0.0.1:1", "ledger": ledger, "table": "t"}}}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `table "t" is a SQL ledger's`) {
		t.Errorf("Validate: %v\nwant it to refuse the table", err)
	}
	// A cluster that is not there: Build fails within fetch_timeout.
	cfg = &config.Config{
		Store:     config.Sequence{Backend: "etcd", FetchTimeout: "1s", Options: config.Options{"ledger": "etcd://" + silentAddr(t)}},
		Templates: map[string]config.Template{"a": {Template: "A@<seq>"}},
	}
	start := time.Now()
	_, err := cfg.Build(t.Context())
	if took := time.Since(start); err == nil || took > 5*time.Second {
		t.Fatalf("Build over a cluster that does not answer: %v after %v", err, took)
	}
	if !errors.Is(err, sequence.ErrUnavailable) {
		t.Errorf("Build over a cluster that does not answer: %v; want ErrUnavailable", err)
	}
}

// silentAddr returns the address of a port that accepts connections and
// never answers.
func silentAddr(t *testing.T) string { return redistest.SilentServer(t) }
