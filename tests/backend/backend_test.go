package backend_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/internal/testserver"
	"github.com/sngen/sn/sequence/boltseq"
)

// TestMain runs the tests with the PostgreSQL and MariaDB servers of
// pgtest and mysqltest, stopped when the tests end. (The Redis servers and
// clusters are each a test's own.)
func TestMain(m *testing.M) {
	os.Exit(testserver.Chain(m.Run, pgtest.Run, mysqltest.Run, redistest.Run, etcdtest.Run))
}

// issue returns n numbers of template name.
func issue(t *testing.T, set *config.Set, name string, n int) []string {
	t.Helper()
	g, ok := set.Get(name)
	if !ok {
		t.Fatalf("no template %q", name)
	}
	out, err := g.Issue(t.Context(), sn.Request{N: n})
	if err != nil {
		t.Fatalf("%s: NextN(%d): %v", name, n, err)
	}
	return out
}

// seqOf returns the number after prefix in s.
func seqOf(t *testing.T, s, prefix string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimPrefix(s, prefix), 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// last opens the bolt file at path (which must be closed) and returns the
// high-water mark of key.
func last(t *testing.T, path, key string) int64 {
	t.Helper()
	st, err := boltseq.Open(path, boltseq.Options{LockTimeout: -1})
	if err != nil {
		t.Fatalf("the store is still open: %v", err)
	}
	defer st.Close()
	n, err := st.Last(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// one is a config of template "a" drawing from s.
func one(text string, s config.Sequence) *config.Config {
	return &config.Config{Templates: map[string]config.Template{"a": {Template: text, Sequence: s}}}
}

func TestBoltSharedFile(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "bolt", Step: 10, Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{
			"a":     {Template: "A@<seq>"},
			"b":     {Template: "B@<seq>", Sequence: config.Sequence{Step: 50, MaxStep: 50}},
			"c":     {Template: "C@<seq>", Sequence: config.Sequence{Options: config.Options{"path": filepath.Join(dir, "sn.db")}}}, // the same file
			"other": {Template: "O@<seq>", Sequence: config.Sequence{Options: config.Options{"path": "other.db"}}},
			"mem":   {Template: "M@<seq>", Sequence: config.Sequence{Backend: "memory"}},
		},
	}
	var prev map[string]int64
	for run := range 3 {
		// A file opened twice in one process would wait for its own lock:
		// Build opens sn.db once for a, b and c.
		set, err := cfg.Build(t.Context(), config.WithDir(dir), config.WithLockWait(-1))
		if err != nil {
			t.Fatal(err)
		}
		cur := map[string]int64{}
		for _, name := range []string{"a", "b", "c", "other"} {
			nums := issue(t, set, name, 25)
			for i, s := range nums {
				n := seqOf(t, s, strings.ToUpper(name[:1]))
				if i > 0 && n <= cur[name] {
					t.Errorf("run %d: %s: %d after %d", run, name, n, cur[name])
				}
				if i == 0 && n <= prev[name] {
					t.Errorf("run %d: %s starts at %d, at or below the last run's %d", run, name, n, prev[name])
				}
				cur[name] = n
			}
		}
		if got := issue(t, set, "mem", 1); got[0] != "M1" {
			t.Errorf("mem = %q, want M1 in each run", got)
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		// Closing the Set released both files: they open again at once.
		if n := last(t, filepath.Join(dir, "sn.db"), "A@<seq>"); n < cur["a"] {
			t.Errorf("sn.db mark of a = %d, below the issued %d", n, cur["a"])
		}
		last(t, filepath.Join(dir, "other.db"), "O@<seq>")
		prev = cur
	}
}

func TestExact(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{
		Store:     config.Sequence{Backend: "bolt", Options: config.Options{"path": filepath.Join(dir, "sn.db")}},
		Templates: map[string]config.Template{"a": {Template: "A@<seq>", Floor: 100}},
	}
	var got []string
	for range 2 {
		set, err := cfg.Build(t.Context(), config.WithExact())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, issue(t, set, "a", 3)...)
		g, _ := set.Get("a")
		s, err := g.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"A101", "A102", "A103", "A104", "A105", "A106", "A107", "A108"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("numbers (-want +got):\n%s", diff)
	}
	if n := last(t, filepath.Join(dir, "sn.db"), "A@<seq>"); n != 108 {
		t.Errorf("mark = %d, want 108: Exact reserves nothing beyond what was issued", n)
	}
}

func TestFloorThroughSegment(t *testing.T) {
	dir := t.TempDir()
	cfg := one("@<ownerKey, value=A>-@<seq>", config.Sequence{Backend: "bolt", Step: 10, Options: config.Options{"path": "sn.db"}})
	cfg.Templates["a"] = config.Template{Template: cfg.Templates["a"].Template, Sequence: cfg.Templates["a"].Sequence, Floor: 5000}
	set, err := cfg.Build(t.Context(), config.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if got := issue(t, set, "a", 2); !cmp.Equal(got, []string{"A-5001", "A-5002"}) {
		t.Errorf("numbers = %q, want A-5001, A-5002", got)
	}
}

// A Build that fails releases the files it opened before the failure.
func TestFailedBuildReleases(t *testing.T) {
	dir := t.TempDir()
	held, err := boltseq.Open(filepath.Join(dir, "held.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "bolt"},
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Sequence: config.Sequence{Options: config.Options{"path": "free.db"}}},
			"b": {Template: "B@<seq>", Sequence: config.Sequence{Options: config.Options{"path": "held.db"}}},
		},
	}
	_, err = cfg.Build(t.Context(), config.WithDir(dir), config.WithLockWait(-1))
	if !errors.Is(err, boltseq.ErrLocked) {
		t.Fatalf("Build = %v, want boltseq.ErrLocked", err)
	}
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Template != "b" || !strings.HasPrefix(err.Error(), `config: template "b": bolt sequence: `) {
		t.Errorf("Build error %v: want template b's bolt sequence", err)
	}
	last(t, filepath.Join(dir, "free.db"), "") // released
}

// strictNeedsLedger is the error of a redis-strict template "a" without a
// ledger, nor a path on a single host.
const strictNeedsLedger = `config: template "a": sequence.ledger: the redis-strict backend needs a ledger that every machine using its Redis shares, ` +
	`a database URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379 ` +
	`(set ledger here or in store; or, when one host alone uses the Redis, path and single_host: true)`

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	held, err := boltseq.Open(filepath.Join(dir, "held.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	tests := []struct {
		name string
		s    config.Sequence
		is   error  // wrapped by the error, when not nil
		want string // the error's message, when not empty
	}{
		{name: "missing directory", s: config.Sequence{Backend: "bolt", Options: config.Options{"path": "no/such/dir/sn.db"}}, is: fs.ErrNotExist},
		{name: "file in use", s: config.Sequence{Backend: "bolt", Options: config.Options{"path": "held.db"}}, is: boltseq.ErrLocked},
		{name: "no path", s: config.Sequence{Backend: "bolt"},
			want: `config: template "a": sequence.path: the bolt backend needs a file (set path here or in store)`},
		{name: "unknown backend", s: config.Sequence{Backend: "consul"},
			want: `config: template "a": sequence.backend "consul": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)`},
		{name: "a database for a backend", s: config.Sequence{Backend: "postgres"},
			want: `config: template "a": sequence.backend "postgres": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite; for postgres, set backend: sql and ledger: postgres://user:password@host:5432/db)`},
		{name: "bad step", s: config.Sequence{Backend: "bolt", Step: -1, Options: config.Options{"path": "x.db"}},
			want: "config: template \"a\": sequence.step -1: want 1 or more (or 0 for the default)"},
		{name: "no url", s: config.Sequence{Backend: "redis"},
			want: `config: template "a": sequence.url: the redis backend needs a Redis URL (set url here or in store)`},
		{name: "bad scheme", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "http://localhost"}},
			want: `config: template "a": sequence.url: redis URL "http://localhost": unknown scheme "http" (want redis, rediss, unix, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel)`},
		{name: "no scheme", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "localhost:6379"}},
			want: `config: template "a": sequence.url: redis URL "localhost:6379": want redis://host:port, rediss://, unix://, redis+cluster://host:port,host:port or redis+sentinel://host:port,host:port/master`},
		{name: "password hidden", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://u:secret@localhost:6379/x"}},
			want: `config: template "a": sequence.url: redis URL "redis://u:xxxxx@localhost:6379/x": redis: invalid database number: "x"`},
		{name: "strict with bad url", s: config.Sequence{Backend: "redis-strict", Options: config.Options{"path": "strict.db", "single_host": true, "url": "nope://"}},
			want: `config: template "a": sequence.url: redis URL "nope://": unknown scheme "nope" (want redis, rediss, unix, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel)`},
		{name: "strict without url and ledger", s: config.Sequence{Backend: "redis-strict"},
			want: strictNeedsLedger + "\n" +
				`config: template "a": sequence.url: the redis-strict backend needs a Redis URL (set url here or in store)`},
		// A file per machine behind a shared Redis repeats numbers once
		// Redis loses its data: only a single host may pair them.
		{name: "strict with a file and no ledger", s: config.Sequence{Backend: "redis-strict", Options: config.Options{"path": "strict.db", "url": "redis://x"}},
			want: `config: template "a": sequence.path: path "strict.db": a file is one machine's, and behind a Redis that several machines share it repeats numbers once Redis loses its data: set ledger to a database every machine shares (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), or single_host: true if one host alone uses this Redis`},
		{name: "strict on a single host without a file", s: config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://x", "single_host": true}},
			want: strictNeedsLedger},
		{name: "fields the backend does not read", s: config.Sequence{Backend: "redis-strict", Target: "1m", MaxStep: 5, Options: config.Options{"path": "strict.db", "single_host": true, "url": "redis://x"}},
			want: `config: template "a": sequence.max_step: not used by the redis-strict backend` + "\n" +
				`config: template "a": sequence.target: not used by the redis-strict backend`},
		{name: "bolt reads no ledger", s: config.Sequence{Backend: "bolt", Options: config.Options{"path": "x.db", "ledger": "postgres://h/db", "single_host": true}},
			want: `config: template "a": sequence.ledger: not used by the bolt backend` + "\n" +
				`config: template "a": sequence.single_host: not used by the bolt backend`},
		{name: "redis reads no single_host", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://x", "single_host": true}},
			want: `config: template "a": sequence.single_host: not used by the redis backend`},
		{name: "sql without ledger", s: config.Sequence{Backend: "sql"},
			want: `config: template "a": sequence.ledger: the sql backend needs a ledger, a database URL such as postgres://user:password@host:5432/db or mysql://user:password@host:3306/db (set ledger here or in store)`},
		{name: "ledger not a URL", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "host=db dbname=orders password=secret"}},
			want: `config: template "a": sequence.ledger: ledger "host=db dbname=orders password=xxxxx": want a URL such as postgres://user:password@host:5432/db or mysql://user:password@host:3306/db`},
		{name: "ledger scheme", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://x", "ledger": "sqlite://u:secret@/x.db"}},
			want: `config: template "a": sequence.ledger: ledger "sqlite://u:xxxxx@/x.db": unknown scheme "sqlite" (want etcd, etcds, mysql, postgres, postgresql: postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379)`},
		{name: "ledger password hidden", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "postgres://u:secret@h:port/db"}},
			want: `config: template "a": sequence.ledger: ledger "postgres://u:xxxxx@h:port/db": invalid port ":port" after host`},
		{name: "mysql ledger without a database", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql://u:secret@h:3306"}},
			want: `config: template "a": sequence.ledger: ledger "mysql://u:xxxxx@h:3306": want a database name, as in mysql://user:password@host:3306/db`},
		{name: "mysql ledger without a host", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql:///db"}},
			want: `config: template "a": sequence.ledger: ledger "mysql:///db": want a host, as in mysql://user:password@host:3306/db`},
		{name: "mysql ledger with a bad parameter", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql://h/db?parseTime=maybe"}},
			want: `config: template "a": sequence.ledger: ledger "mysql://h/db?parseTime=maybe": invalid bool value: maybe`},
		{name: "bad table", s: config.Sequence{Backend: "sql", Options: config.Options{"ledger": "postgres://h/db", "table": "sn-ledger"}},
			want: `config: template "a": sequence.table: table "sn-ledger": want a name such as sn_ledger or billing.sn_ledger (letters, digits and "_")`},
		{name: "table without ledger", s: config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://x", "table": "numbers"}},
			want: `config: template "a": sequence.table: table numbers is a ledger's setting: set ledger too`},
		{name: "strict on a single host with a table", s: config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://x", "path": "strict.db", "single_host": true, "table": "numbers"}},
			want: `config: template "a": sequence.table: table numbers is a ledger's setting: set ledger too`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := one("A@<seq>", tt.s).Build(t.Context(), config.WithDir(dir), config.WithLockWait(-1))
			if err == nil {
				set.Close()
				t.Fatal("Build: nil error")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("Build error %v does not wrap config.ErrInvalid", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Build error %v does not wrap %v", err, tt.is)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("Build error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	// Validate opened nothing: no strict.db.
	if _, err := os.Stat(filepath.Join(dir, "strict.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("strict.db: %v, want no file", err)
	}
}

func TestCheck(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	segment := []string{"step", "min_step", "max_step", "prefetch", "target", "fetch_timeout", "idle"}
	strictFields := []string{"url", "prefix", "replicas", "replica_timeout", "ledger", "table", "replication", "path", "single_host", "step", "fetch_timeout"}
	redisFields := []string{"url", "prefix", "replicas", "replica_timeout", "ledger", "table", "replication"}
	tests := []struct {
		name string
		dir  string
		s    config.Sequence
		want config.StoreInfo
	}{
		{"bolt relative", "/srv/sn", config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}},
			config.StoreInfo{ID: "bolt /srv/sn/sn.db", Durable: true, Fields: append([]string{"path"}, segment...)}},
		{"bolt absolute", "/srv/sn", config.Sequence{Backend: "bolt", Options: config.Options{"path": "/srv/sn/./sn.db"}},
			config.StoreInfo{ID: "bolt /srv/sn/sn.db", Durable: true, Fields: append([]string{"path"}, segment...)}},
		{"bolt in the current directory", "", config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}},
			config.StoreInfo{ID: "bolt " + filepath.Join(wd, "sn.db"), Durable: true, Fields: append([]string{"path"}, segment...)}},
		{"sql", "", config.Sequence{Backend: "sql", Options: config.Options{"ledger": "postgres://u:pw@db:5432/orders?sslmode=disable"}},
			config.StoreInfo{ID: `sql ledger postgres://u:xxxxx@db:5432/orders?sslmode=disable table sn_ledger`, Durable: true, Fields: append([]string{"ledger", "table", "replication"}, segment...)}},
		{"sql on mysql with a table", "", config.Sequence{Backend: "sql", Options: config.Options{"ledger": "mysql://u:pw@db/orders", "table": "billing.numbers"}},
			config.StoreInfo{ID: `sql ledger mysql://u:xxxxx@db/orders table billing.numbers`, Durable: true, Fields: append([]string{"ledger", "table", "replication"}, segment...)}},
		{"sql with a password parameter", "", config.Sequence{Backend: "sql", Options: config.Options{"ledger": "postgresql://db/orders?user=u&password=pw"}},
			config.StoreInfo{ID: `sql ledger postgresql://db/orders?password=xxxxx&user=u table sn_ledger`, Durable: true, Fields: append([]string{"ledger", "table", "replication"}, segment...)}},
		{"redis", "", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://u:pw@h:6379/1"}},
			config.StoreInfo{ID: `redis redis://u:xxxxx@h:6379/1 prefix "sn:"`, Durable: true, Fields: append(redisFields, segment...)}},
		{"redis with a prefix", "", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://h:6379/1", "prefix": "t:"}},
			config.StoreInfo{ID: `redis redis://h:6379/1 prefix "t:"`, Durable: true, Fields: append(redisFields, segment...)}},
		{"redis with a ledger", "", config.Sequence{Backend: "redis", Options: config.Options{"url": "redis://h:6379/1", "ledger": "mysql://u:pw@db/orders"}},
			config.StoreInfo{ID: `redis redis://h:6379/1 prefix "sn:" ledger mysql://u:xxxxx@db/orders table sn_ledger`, Durable: true, Fields: append(redisFields, segment...)}},
		{"redis-strict on a single host", "/srv", config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://h", "path": "s.db", "single_host": true}},
			config.StoreInfo{ID: `redis-strict redis://h prefix "sn:" /srv/s.db`, Durable: true, Fields: strictFields}},
		// The ledger wins over a path (inherited from a store, say).
		{"redis-strict with a ledger", "/srv", config.Sequence{Backend: "redis-strict", Options: config.Options{"url": "redis://h", "path": "s.db", "ledger": "postgres://db/orders", "table": "t"}},
			config.StoreInfo{ID: `redis-strict redis://h prefix "sn:" ledger postgres://db/orders table t`, Durable: true, Fields: strictFields}},
		// A snowflake's ids are not counted: no floor. A leased worker id
		// outlives the process (its bound is in Redis or the database); a
		// fixed one does not. A url wins over a ledger.
		{"snowflake leased", "", config.Sequence{Backend: "snowflake", Options: config.Options{"url": "redis://u:pw@h:6379/0", "prefix": "t:"}},
			config.StoreInfo{ID: `snowflake twitter lease redis://u:xxxxx@h:6379/0 prefix "t:"`, Durable: true, NoFloor: true, Bits: 63, Fields: []string{"layout", "url", "prefix"}}},
		{"snowflake leased from a ledger", "", config.Sequence{Backend: "snowflake", Options: config.Options{"ledger": "postgres://u:pw@db/shop", "table": "ids"}},
			config.StoreInfo{ID: `snowflake twitter lease ledger postgres://u:xxxxx@db/shop table ids`, Durable: true, NoFloor: true, Bits: 63, Fields: []string{"layout", "ledger", "table", "replication"}}},
		{"snowflake with a url and a ledger", "", config.Sequence{Backend: "snowflake", Options: config.Options{"url": "redis://h", "ledger": "postgres://db/shop"}},
			config.StoreInfo{ID: `snowflake twitter lease redis://h prefix "sn:"`, Durable: true, NoFloor: true, Bits: 63, Fields: []string{"layout", "url", "prefix"}}},
		{"snowflake fixed", "", config.Sequence{Backend: "snowflake", Options: config.Options{"layout": "sonyflake", "worker": 0, "single_process": true, "url": "redis://h"}},
			config.StoreInfo{ID: `snowflake sonyflake worker 0`, NoFloor: true, Bits: 63, Fields: []string{"layout", "worker", "single_process"}}},
		{"snowflake explicit", "", config.Sequence{Backend: "snowflake", Options: config.Options{"layout": "40/8/10", "epoch": "2024-01-01", "unit": "10ms", "url": "redis://h"}},
			config.StoreInfo{ID: `snowflake 40/8/10 unit 10ms epoch 2024-01-01T00:00:00Z lease redis://h prefix "sn:"`, Durable: true, NoFloor: true, Bits: 58, Fields: []string{"layout", "epoch", "unit", "url", "prefix"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := config.Lookup(tt.s.Backend)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Check(&config.Target{Name: "a", Sequence: tt.s, Dir: tt.dir})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// The Generators of a Set share their file safely across goroutines.
func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{
		Store: config.Sequence{Backend: "bolt", Step: 5, Options: config.Options{"path": "sn.db"}},
		Templates: map[string]config.Template{
			"a": {Template: "@<ownerKey, value=K>A@<seq>"},
			"b": {Template: "@<ownerKey, value=K>B@<seq>"}, // the same counter
		},
	}
	set, err := cfg.Build(t.Context(), config.WithDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]bool{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"a", "b"}[i%2]
			g, _ := set.Get(name)
			for range 20 {
				s, err := g.Next(t.Context())
				if err != nil {
					t.Error(i, err)
					return
				}
				n := seqOf(t, s, "K"+strings.ToUpper(name))
				mu.Lock()
				if seen[n] {
					t.Errorf("%d issued twice", n)
				}
				seen[n] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 160 {
		t.Errorf("%d numbers, want 160", len(seen))
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	last(t, filepath.Join(dir, "sn.db"), "K")
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := t.TempDir()
	_, err := one("A@<seq>", config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}}).Build(ctx, config.WithDir(dir))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Build = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sn.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sn.db: %v, want no file", err)
	}
}
