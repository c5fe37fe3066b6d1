package backend_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	backendredis "github.com/sngen/sn/backend/redis"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// Without a ledger, the counters live in Redis alone: a Redis that fsyncs
// every write.
func TestRedisSegments(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	url := "redis://" + srv.Addr() + "/0"
	cfg := &config.Config{
		Store: config.Sequence{Backend: "redis", Step: 10, Options: config.Options{"url": url, "prefix": "test:"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Floor: 300},
			"b": {Template: "B@<seq>"},
		},
	}
	var prevA int64
	for run := range 2 {
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		nums := issue(t, set, "a", 15)
		if first := seqOf(t, nums[0], "A"); first <= max(prevA, 300) {
			t.Errorf("run %d: a starts at %d, want above %d", run, first, max(prevA, 300))
		}
		prevA = seqOf(t, nums[len(nums)-1], "A")
		if got := issue(t, set, "b", 1); run == 0 && got[0] != "B1" {
			t.Errorf("b = %q, want B1", got)
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The counters are under the prefix, with the epoch marker that tells
	// a Redis that lost them, A's highest floor (its config sets one), and
	// the records: the catalog of the templates, and the identity of the
	// Redis and prefix.
	keys, err := srv.Client(t).Keys(t.Context(), "test:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"test:{%records}:i", "test:{%records}:n", "test:{%records}:seq", "test:{%records}:v", "test:{A@<seq>}", "test:{A@<seq>}:epoch", "test:{A@<seq>}:floor", "test:{B@<seq>}", "test:{B@<seq>}:epoch"}; !cmp.Equal(keys, want) {
		t.Errorf("keys under test: = %q, want %q", keys, want)
	}
}

// On a single host, a bolt file may back the strict counter.
func TestRedisStrictSingleHost(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "redis-strict", Step: 4, Options: config.Options{"url": "redis://" + srv.Addr(), "path": "strict.db", "single_host": true}},
		Templates: map[string]config.Template{
			"a": {Template: "@<ownerKey, value=K>A@<seq>"},
			"b": {Template: "@<ownerKey, value=K>B@<seq>"}, // the same counter
			// The same file as the strict counters', opened once.
			"c": {Template: "C@<seq>", Sequence: config.Sequence{Backend: "bolt", Step: 10}},
		},
	}
	set, err := cfg.Build(t.Context(), config.WithDir(dir), config.WithLockWait(-1))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{"a", "b", "a", "b", "a", "c"} {
		got = append(got, issue(t, set, name, 1)...)
	}
	if want := []string{"KA1", "KB2", "KA3", "KB4", "KA5", "C1"}; !cmp.Equal(got, want) {
		t.Errorf("numbers = %q, want %q (first come, first served)", got, want)
	}
	// Redis loses its data: the next range comes from the bolt file, above
	// everything issued.
	if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	after := issue(t, set, "a", 1)
	if n := seqOf(t, after[0], "KA"); n <= 5 {
		t.Errorf("after FLUSHALL: %s, want above KA5", after[0])
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if n := last(t, filepath.Join(dir, "strict.db"), "K"); n < 8 {
		t.Errorf("bolt mark = %d, want at least 8 (two refills of 4)", n)
	}
}

func TestRedisUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop(t)
	url := "redis://" + srv.Addr() + "?max_retries=-1"
	_, err := one("A@<seq>", config.Sequence{Backend: "redis", Options: config.Options{"url": url}}).Build(t.Context())
	if want := `config: template "a": redis sequence: backend/redis: ` + url + ": dial tcp " + srv.Addr() + ": connect: connection refused"; err == nil || err.Error() != want {
		t.Errorf("Build = %v, want %s", err, want)
	}
}

// A server that accepts connections and never answers fails Build within
// fetch_timeout, and the strict counter's file is released.
func TestRedisNoAnswer(t *testing.T) {
	addr := redistest.SilentServer(t)
	url := "redis://" + addr
	for _, b := range []string{"redis", "redis-strict"} {
		path := ""
		if b == "redis-strict" {
			path = filepath.Join(t.TempDir(), "strict.db")
		}
		_, err := one("A@<seq>", config.Sequence{Backend: b, FetchTimeout: "50ms", Options: config.Options{"url": url, "path": path, "single_host": path != ""}}).Build(t.Context())
		if want := `config: template "a": ` + b + " sequence: backend/redis: " + url + ": no answer within 50ms: context deadline exceeded"; err == nil || err.Error() != want {
			t.Errorf("%s: Build = %v, want %s", b, err, want)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: Build = %v, want context.DeadlineExceeded", b, err)
		}
		if path != "" {
			last(t, path, "")
		}
	}
}

// A Redis Cluster serves blocks and strict counters, each refilled from
// the ledger.
func TestRedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	url := "redis+cluster://" + strings.Join(cl.Addrs(), ",")
	ledger := pgtest.Shared(t).NewDatabase(t)
	cfg := &config.Config{
		Store: config.Sequence{Backend: "redis", Step: 3, Options: config.Options{"url": url, "ledger": ledger, "prefix": "backend-test:"}},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>"},
			"b": {Template: "B@<seq>"},
			"s": {Template: "S@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Step: 5}},
		},
	}
	seen := map[string]bool{}
	for run := range 2 {
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			for _, name := range []string{"a", "b", "s"} {
				s := issue(t, set, name, 1)[0]
				if seen[s] {
					t.Errorf("run %d: %s issued twice", run, s)
				}
				seen[s] = true
			}
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		// The cluster loses its data: the next ranges come from the ledger.
		err = cl.Client(t).ForEachMaster(t.Context(), func(ctx context.Context, c *redis.Client) error {
			return c.FlushAll(ctx).Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := issueOne(t, cfg, "s"); seen[got] {
		t.Errorf("after the flush: %s issued again", got)
	}
}

// A Redis that does not fsync every write is refused as the only keeper of
// the counters at Build, when the template is enrolled in its catalog.
func TestRedisOnlyUnsafe(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr()
	if _, err := one("A@<seq>", config.Sequence{Backend: "redis", Options: config.Options{"url": url}}).Build(t.Context()); !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("Build = %v, want redisseq.ErrUnsafe", err)
	}
	cfg := one("A@<seq>", config.Sequence{Backend: "redis", Options: config.Options{"url": url}})
	cfg.Templates["a"] = config.Template{Template: "A@<seq>", Sequence: cfg.Templates["a"].Sequence, Floor: 10}
	if _, err := cfg.Build(t.Context(), config.WithExact()); !errors.Is(err, redisseq.ErrUnsafe) {
		t.Errorf("Build with a floor = %v, want redisseq.ErrUnsafe", err)
	}
	if n, err := srv.Client(t).DBSize(t.Context()).Result(); err != nil || n != 0 {
		t.Errorf("the unsafe Redis holds %d keys (%v), want none written", n, err)
	}
}

func TestNewRedisClient(t *testing.T) {
	tests := []struct {
		url       string
		addrs     []string // cluster seed nodes; nil for one server
		addr      string
		user, pw  string
		db        int
		dial      time.Duration
		tls       bool
		wantError string
	}{
		{url: "redis://localhost:6379/2", addr: "localhost:6379", db: 2},
		{url: "rediss://u:p@cache:6380?dial_timeout=3s", addr: "cache:6380", user: "u", pw: "p", dial: 3 * time.Second, tls: true},
		{url: "unix:///run/redis.sock?db=1", addr: "/run/redis.sock", db: 1},
		{url: "redis+cluster://h1:7000,h2:7001,h3:7002", addrs: []string{"h1:7000", "h2:7001", "h3:7002"}},
		{url: "rediss+cluster://u:p@h1:7000,h2:7001/?dial_timeout=2s", addrs: []string{"h1:7000", "h2:7001"}, user: "u", pw: "p", dial: 2 * time.Second, tls: true},
		{url: "redis+cluster://h1:7000?addr=h2:7001", addrs: []string{"h1:7000", "h2:7001"}},
		{url: "redis+cluster://h1:7000,,h2:7001", wantError: `backend/redis: URL "redis+cluster://h1:7000,,h2:7001": empty host in "h1:7000,,h2:7001"`},
		{url: "redis+cluster://h1:7000/3", wantError: `backend/redis: URL "redis+cluster://h1:7000/3": a cluster has no database number (found path "/3")`},
		{url: "redis+cluster://h1:7000?bogus=1", wantError: `backend/redis: URL "redis+cluster://h1:7000?bogus=1": redis: unexpected option: bogus`},
		// A password with a character that must be percent-encoded: no
		// piece of it shows.
		{url: "redis://:S3c/retPW@h:6379/0", wantError: `backend/redis: URL "redis://:xxxxx@h:6379/0": not a valid URL; in the user and password, write "/" "?" "#" "@" "%" ":" as %2F %3F %23 %40 %25 %3A`},
		{url: "redis+cluster://u:S3c/retPW@h1,h2", wantError: `backend/redis: URL "redis+cluster://u:xxxxx@h1,h2": not a valid URL; in the user and password, write "/" "?" "#" "@" "%" ":" as %2F %3F %23 %40 %25 %3A`},
		{url: "redis://:S3c%zzPW@h:6379/0", wantError: `backend/redis: URL "redis://:xxxxx@h:6379/0": not a valid URL; in the user and password, write "/" "?" "#" "@" "%" ":" as %2F %3F %23 %40 %25 %3A`},
		{url: "redis+sentinel://h1:26379", wantError: `backend/redis: URL "redis+sentinel://h1:26379": want the master's name, and optionally a database number, as the path: redis+sentinel://host1:26379,host2:26379/mymaster/0`},
		{url: "redis+sentinel://h1:26379,,h2/m", wantError: `backend/redis: URL "redis+sentinel://h1:26379,,h2/m": empty host in "h1:26379,,h2"`},
		{url: "redis+sentinel://h1:26379/m/1/2", wantError: `backend/redis: URL "redis+sentinel://h1:26379/m/1/2": want the master's name, and optionally a database number, as the path: redis+sentinel://host1:26379,host2:26379/mymaster/0`},
		{url: "redis+url://h1", wantError: `backend/redis: URL "redis+url://h1": unknown scheme "redis+url" (want redis, rediss, unix, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel)`},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			c, err := backendredis.NewClient(tt.url)
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError {
					t.Fatalf("NewRedisClient error:\n got %v\nwant %s", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			switch c := c.(type) {
			case *redis.Client:
				o := c.Options()
				if !o.ContextTimeoutEnabled {
					t.Error("ContextTimeoutEnabled is false: a context's deadline would not end a command")
				}
				if tt.addrs != nil || o.Addr != tt.addr || o.DB != tt.db || o.Username != tt.user || o.Password != tt.pw || (o.TLSConfig != nil) != tt.tls || tt.dial != 0 && o.DialTimeout != tt.dial {
					t.Errorf("client options: addr %q db %d user %q pw %q tls %v dial %v", o.Addr, o.DB, o.Username, o.Password, o.TLSConfig != nil, o.DialTimeout)
				}
			case *redis.ClusterClient:
				o := c.Options()
				if !o.ContextTimeoutEnabled {
					t.Error("ContextTimeoutEnabled is false: a context's deadline would not end a command")
				}
				if !cmp.Equal(o.Addrs, tt.addrs) || o.Username != tt.user || o.Password != tt.pw || (o.TLSConfig != nil) != tt.tls || tt.dial != 0 && o.DialTimeout != tt.dial {
					t.Errorf("cluster options: addrs %q user %q pw %q tls %v dial %v", o.Addrs, o.Username, o.Password, o.TLSConfig != nil, o.DialTimeout)
				}
			default:
				t.Errorf("client is a %T", c)
			}
		})
	}
}

// replicas reaches both Redis backends: with a replica every number
// waits for it and is issued; with none to acknowledge, no number is
// issued and the call fails with sequence.ErrUnavailable after
// replica_timeout.
func TestRedisReplicas(t *testing.T) {
	master := redistest.Start(t)
	redistest.StartReplica(t, master)
	alone := redistest.Start(t)
	ledger := pgtest.Shared(t).NewDatabase(t)
	for _, backendName := range []string{"redis", "redis-strict"} {
		t.Run(backendName, func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				srv      *redistest.Server
				replicas int
				timeout  string
				ok       bool
			}{{"with a replica", master, 1, "3s", true}, {"without one", alone, 1, "100ms", false}, {"not waiting", alone, 0, "", true}} {
				cfg := &config.Config{
					Store:     config.Sequence{Backend: backendName, FetchTimeout: "4s", Options: config.Options{"url": "redis://" + tc.srv.Addr() + "/0", "ledger": ledger, "prefix": backendName + ":", "replicas": tc.replicas, "replica_timeout": tc.timeout}},
					Templates: map[string]config.Template{"a": {Template: "A@<seq>"}},
				}
				set, err := cfg.Build(t.Context(), config.WithExact())
				if err != nil {
					t.Fatal(err)
				}
				g, _ := set.Get("a")
				s, err := g.Next(t.Context())
				set.Close()
				switch {
				case tc.ok && err != nil:
					t.Errorf("%s: %v", tc.name, err)
				case !tc.ok && (err == nil || !errors.Is(err, sequence.ErrUnavailable) || !strings.Contains(err.Error(), "replica")):
					t.Errorf("%s: Next = %q, %v; want an error wrapping sequence.ErrUnavailable that names the replicas", tc.name, s, err)
				}
			}
		})
	}
}
