package backend_test

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

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
		{"no ledger", config.Sequence{Backend: "etcd"}, "the etcd backend needs endpoints, or a ledger"},
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
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `table t: the ledger etcd://`) {
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

// An etcd ledger's URL carries etcd's authentication: with auth on, the
// user of the URL issues under the prefix it may write; a wrong password
// is an error of Build, not of the first number.
func TestEtcdAuth(t *testing.T) {
	ctx := t.Context()
	c := etcdtest.Start(t)
	cli := c.Client(t)
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "numbers"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "numbers", "billing/", clientv3.GetPrefixRangeEnd("billing/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, "sn", "s3cret"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "sn", "numbers"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("setting up auth, step %d: %v", i, err)
		}
	}
	var hosts []string
	for _, ep := range c.Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(ep, "http://"))
	}
	url := func(userinfo string) string {
		return "etcd://" + userinfo + strings.Join(hosts, ",") + "/billing/"
	}
	build := func(ledger string) (*config.Set, error) {
		cfg := &config.Config{
			Store:     config.Sequence{Backend: "etcd", FetchTimeout: "3s", Options: config.Options{"ledger": ledger}},
			Templates: map[string]config.Template{"inv": {Template: "INV@<seq>"}},
		}
		return cfg.Build(ctx)
	}
	set, err := build(url("sn:s3cret@"))
	if err != nil {
		t.Fatal(err)
	}
	if got := issue(t, set, "inv", 3); !slices.Equal(got, []string{"INV1", "INV2", "INV3"}) {
		t.Errorf("issued %q", got)
	}
	set.Close()
	// The same cluster given by the etcd backend's own fields.
	cfg := &config.Config{
		Store: config.Sequence{Backend: "etcd", FetchTimeout: "3s", Options: config.Options{
			"endpoints": anys(c.Endpoints()), "prefix": "billing/other/", "username": "sn", "password": "s3cret"}},
		Templates: map[string]config.Template{"inv": {Template: "INV@<seq>"}},
	}
	set, err = cfg.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := issue(t, set, "inv", 1); !slices.Equal(got, []string{"INV1"}) {
		t.Errorf("issued %q under another prefix", got)
	}
	set.Close()
	for _, bad := range []string{"sn:wrong@", ""} {
		if _, err := build(url(bad)); err == nil {
			t.Errorf("Build with user %q: no error", bad)
		} else {
			t.Logf("user %q: %v", bad, err)
		}
	}
}

// An etcds:// ledger connects over TLS with the URL's files: the
// authority's certificate, and the client's certificate and key when the
// members ask for one. Without them, or over plain etcd://, Build fails.
func TestEtcdTLS(t *testing.T) {
	c, files := etcdtest.StartTLS(t)
	var hosts []string
	for _, ep := range c.Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(ep, "https://"))
	}
	build := func(ledger string) (*config.Set, error) {
		cfg := &config.Config{
			Store:     config.Sequence{Backend: "etcd", FetchTimeout: "2s", Options: config.Options{"ledger": ledger}},
			Templates: map[string]config.Template{"inv": {Template: "INV@<seq>"}},
		}
		return cfg.Build(t.Context())
	}
	q := url.Values{"ca": {files.CA}, "cert": {files.Cert}, "key": {files.Key}}
	set, err := build("etcds://" + strings.Join(hosts, ",") + "/billing/?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got := issue(t, set, "inv", 2); !slices.Equal(got, []string{"INV1", "INV2"}) {
		t.Errorf("issued %q", got)
	}
	set.Close()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "etcd", FetchTimeout: "2s", Options: config.Options{
			"endpoints": anys(c.Endpoints()), "prefix": "billing/", "tls_ca": files.CA, "tls_cert": files.Cert, "tls_key": files.Key}},
		Templates: map[string]config.Template{"inv": {Template: "INV@<seq>"}},
	}
	if set, err = cfg.Build(t.Context()); err != nil {
		t.Fatalf("the cluster given by endpoints and TLS files: %v", err)
	}
	if got := issue(t, set, "inv", 1); !slices.Equal(got, []string{"INV3"}) {
		t.Errorf("issued %q", got)
	}
	set.Close()
	for _, bad := range []string{
		"etcds://" + strings.Join(hosts, ",") + "/billing/?ca=" + url.QueryEscape(files.CA), // no client certificate
		"etcds://" + strings.Join(hosts, ",") + "/billing/",                                 // the system's authorities
		"etcd://" + strings.Join(hosts, ",") + "/billing/",                                  // no TLS
	} {
		if set, err := build(bad); err == nil {
			set.Close()
			t.Errorf("Build over %s: no error", bad)
		} else {
			t.Logf("%s: %v", bad, err)
		}
	}
}

// anys returns ss as a YAML list decodes: []any.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
