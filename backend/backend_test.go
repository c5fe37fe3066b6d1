package backend_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn"
	"github.com/sngen/sn/backend"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// issue returns n numbers of template name.
func issue(t *testing.T, set *sn.Set, name string, n int) []string {
	t.Helper()
	g, ok := set.Get(name)
	if !ok {
		t.Fatalf("no template %q", name)
	}
	out, err := g.NextN(t.Context(), n)
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
	st, err := boltseq.Open(path, &boltseq.Options{LockTimeout: -1})
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

func TestBoltSharedFile(t *testing.T) {
	dir := t.TempDir()
	cfg := &sn.Config{
		Store: sn.SequenceConfig{Backend: sn.BackendBolt, Path: "sn.db", Step: 10},
		Templates: map[string]sn.TemplateConfig{
			"a":     {Template: "A@<seq>"},
			"b":     {Template: "B@<seq>", Sequence: sn.SequenceConfig{Step: 50, MaxStep: 50}},
			"other": {Template: "O@<seq>", Sequence: sn.SequenceConfig{Path: "other.db"}},
			"mem":   {Template: "M@<seq>", Sequence: sn.SequenceConfig{Backend: sn.BackendMemory}},
		},
	}
	var prev map[string]int64
	for run := range 3 {
		open := backend.New(backend.Options{Dir: dir})
		set, err := cfg.Build(t.Context(), open.Open)
		if err != nil {
			t.Fatal(err)
		}
		cur := map[string]int64{}
		for _, name := range []string{"a", "b", "other"} {
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
		if err := open.Close(); err != nil {
			t.Errorf("Opener.Close: %v", err)
		}
		prev = cur
	}
}

func TestExact(t *testing.T) {
	dir := t.TempDir()
	cfg := &sn.Config{
		Store:     sn.SequenceConfig{Backend: sn.BackendBolt, Path: filepath.Join(dir, "sn.db")},
		Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>", Floor: 100}},
	}
	var got []string
	for range 2 {
		open := backend.New(backend.Options{Exact: true})
		set, err := cfg.Build(t.Context(), open.Open)
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
		open.Close()
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
	cfg := &sn.Config{
		Store:     sn.SequenceConfig{Backend: sn.BackendBolt, Path: "sn.db", Step: 10},
		Templates: map[string]sn.TemplateConfig{"a": {Template: "@<ownerKey, value=A>-@<seq>", Floor: 5000}},
	}
	open := backend.New(backend.Options{Dir: dir})
	defer open.Close()
	set, err := cfg.Build(t.Context(), open.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if got := issue(t, set, "a", 2); !cmp.Equal(got, []string{"A-5001", "A-5002"}) {
		t.Errorf("numbers = %q, want A-5001, A-5002", got)
	}
}

func TestOpenerClose(t *testing.T) {
	dir := t.TempDir()
	cfg := &sn.Config{
		Store:     sn.SequenceConfig{Backend: sn.BackendBolt, Path: "sn.db"},
		Templates: map[string]sn.TemplateConfig{"a": {Template: "A@<seq>"}, "b": {Template: "B@<seq>"}},
	}
	open := backend.New(backend.Options{Dir: dir})
	set, err := cfg.Build(t.Context(), open.Open)
	if err != nil {
		t.Fatal(err)
	}
	issue(t, set, "a", 1)
	// Closing the Opener first closes the segments and the file under the
	// Set; the Set's own Close then has nothing left to do but report the
	// segments it finds closed.
	if err := open.Close(); err != nil {
		t.Fatalf("Opener.Close: %v", err)
	}
	last(t, filepath.Join(dir, "sn.db"), "A@<seq>")
	g, _ := set.Get("a")
	if _, err := g.Next(t.Context()); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Next after Opener.Close = %v, want sequence.ErrClosed", err)
	}
	if err := set.Close(); !errors.Is(err, sequence.ErrClosed) {
		t.Errorf("Set.Close after Opener.Close = %v, want sequence.ErrClosed from the segments", err)
	}
	if _, _, err := open.Open(t.Context(), "c", sn.SequenceConfig{Backend: sn.BackendBolt, Path: "sn.db"}); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Open after Close = %v, want ErrClosed", err)
	}
	if err := open.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	held, err := boltseq.Open(filepath.Join(dir, "held.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	tests := []struct {
		name string
		sc   sn.SequenceConfig
		is   error  // wrapped by the error, when not nil
		want string // the error's message, when not empty
	}{
		{name: "missing directory", sc: sn.SequenceConfig{Backend: "bolt", Path: "no/such/dir/sn.db"}, is: fs.ErrNotExist},
		{name: "file in use", sc: sn.SequenceConfig{Backend: "bolt", Path: "held.db"}, is: boltseq.ErrLocked},
		{name: "no path", sc: sn.SequenceConfig{Backend: "bolt"}, want: "backend: bolt: no path"},
		{name: "unknown backend", sc: sn.SequenceConfig{Backend: "etcd"}, want: `backend: unknown backend "etcd" (want memory, bolt, redis or redis-strict)`},
		{name: "bad step", sc: sn.SequenceConfig{Backend: "bolt", Path: "x.db", Step: -1}, want: "backend: step -1: want 1 or more (or 0 for the default)"},
		{name: "bad scheme", sc: sn.SequenceConfig{Backend: "redis", URL: "http://localhost"},
			want: `backend: redis URL "http://localhost": unknown scheme "http" (want redis, rediss, unix, redis+cluster or rediss+cluster)`},
		{name: "no scheme", sc: sn.SequenceConfig{Backend: "redis", URL: "localhost:6379"},
			want: `backend: redis URL "localhost:6379": want redis://host:port, rediss://, unix:// or redis+cluster://host:port,host:port`},
		{name: "password hidden", sc: sn.SequenceConfig{Backend: "redis", URL: "redis://u:secret@localhost:6379/x"},
			want: `backend: redis URL "redis://u:xxxxx@localhost:6379/x": redis: invalid database number: "x"`},
		{name: "strict with bad url releases the file", sc: sn.SequenceConfig{Backend: "redis-strict", Path: "strict.db", URL: "nope://"},
			want: `backend: redis URL "nope://": unknown scheme "nope" (want redis, rediss, unix, redis+cluster or rediss+cluster)`},
	}
	open := backend.New(backend.Options{Dir: dir, Bolt: &boltseq.Options{LockTimeout: -1}})
	defer open.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, c, err := open.Open(t.Context(), "x", tt.sc)
			if err == nil {
				t.Fatalf("Open = %v, %v, nil; want an error", g, c)
			}
			if g != nil || c != nil {
				t.Errorf("Open returned %v, %v with its error", g, c)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Open error %v does not wrap %v", err, tt.is)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("Open error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	last(t, filepath.Join(dir, "strict.db"), "") // released after the failed Redis URL
}

func TestConcurrentOpen(t *testing.T) {
	dir := t.TempDir()
	open := backend.New(backend.Options{Dir: dir})
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]bool{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, rel, err := open.Open(t.Context(), "t", sn.SequenceConfig{Backend: sn.BackendBolt, Path: "sn.db", Step: 5})
			if err != nil {
				t.Error(err)
				return
			}
			defer rel.Close()
			defer g.(*sequence.Segment).Close()
			for range 20 {
				n, err := g.Next(t.Context(), "k")
				if err != nil {
					t.Error(i, err)
					return
				}
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
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	last(t, filepath.Join(dir, "sn.db"), "k")
}

func TestMemoryShared(t *testing.T) {
	open := backend.New(backend.Options{})
	defer open.Close()
	var got []int64
	for range 2 {
		g, c, err := open.Open(t.Context(), "m", sn.SequenceConfig{})
		if err != nil || c != nil {
			t.Fatalf("Open(memory) = %v, %v", c, err)
		}
		n, err := g.Next(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if !cmp.Equal(got, []int64{1, 2}) {
		t.Errorf("numbers = %v, want 1, 2 from one shared Memory", got)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	open := backend.New(backend.Options{Dir: t.TempDir()})
	defer open.Close()
	if _, _, err := open.Open(ctx, "x", sn.SequenceConfig{Backend: "bolt", Path: "sn.db"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open = %v, want context.Canceled", err)
	}
}
