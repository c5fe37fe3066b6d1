package boltseq_test

import (
	"github.com/sngen/sn/internal/guardtest"

	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/sequencetest"
)

// The tests re-execute their own binary as a helper process for the lock
// and crash tests. These variables tell the child what to do.
const (
	helperEnv = "BOLTSEQ_TEST_HELPER" // "hold" or "allocate"
	fileEnv   = "BOLTSEQ_TEST_FILE"   // the store's path
	crashKey  = "crash"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := helper(mode, os.Getenv(fileEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper is the child process's main function.
//
// hold: open the store, print "ready", and keep the file open until stdin
// is closed.
//
// allocate: allocate ranges for crashKey forever, printing each range's
// Last on its own line only after Allocate has returned it, until killed.
func helper(mode, path string) error {
	s, err := boltseq.Open(path, boltseq.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	switch mode {
	case "hold":
		if _, err := fmt.Fprintln(os.Stdout, "ready"); err != nil {
			return err
		}
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	case "allocate":
		for i := int64(0); ; i++ {
			r, err := s.Allocate(ctx, crashKey, 1+i%3)
			if err != nil {
				return err
			}
			// One write per line, so a line is never half written.
			if _, err := os.Stdout.WriteString(strconv.FormatInt(r.Last, 10) + "\n"); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
}

// startHelper starts this test binary as a helper process on path.
func startHelper(t *testing.T, mode, path string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout *bufio.Reader) {
	t.Helper()
	cmd = exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, fileEnv+"="+path,
		// Under -race a process lingers 1s at exit unless told otherwise.
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, stdin, bufio.NewReader(out)
}

// tempPath returns the path of a not yet existing store file.
func tempPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "sn.db")
}

// open opens a store at path and closes it when the test ends.
func open(t *testing.T, path string, opts boltseq.Options) *boltseq.Store {
	t.Helper()
	s, err := boltseq.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, sequence.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func mustAllocate(t *testing.T, s *boltseq.Store, key string, n int64) sequence.Range {
	t.Helper()
	r, err := s.Allocate(t.Context(), key, n)
	if err != nil {
		t.Fatalf("Allocate(%q, %d): %v", key, n, err)
	}
	return r
}

func mustLast(t *testing.T, s *boltseq.Store, key string) int64 {
	t.Helper()
	last, err := s.Last(t.Context(), key)
	if err != nil {
		t.Fatalf("Last(%q): %v", key, err)
	}
	return last
}

func TestConformance(t *testing.T) {
	sequencetest.RunAllocator(t, func(t *testing.T) sequence.Allocator {
		return open(t, tempPath(t), boltseq.Options{})
	})
}

func TestAllocate(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	steps := []struct {
		name string
		key  string
		n    int64
		want sequence.Range
	}{
		{"first range of a key starts at 1", "a", 10, sequence.Range{First: 1, Last: 10}},
		{"next range follows", "a", 1, sequence.Range{First: 11, Last: 11}},
		{"another key has its own counter", "b", 3, sequence.Range{First: 1, Last: 3}},
		{"the empty key is a key", "", 2, sequence.Range{First: 1, Last: 2}},
		{"first key continues", "a", 5, sequence.Range{First: 12, Last: 16}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if got := mustAllocate(t, s, st.key, st.n); got != st.want {
				t.Errorf("Allocate(%q, %d) = %v, want %v", st.key, st.n, got, st.want)
			}
			if got := mustLast(t, s, st.key); got != st.want.Last {
				t.Errorf("Last(%q) = %d, want %d", st.key, got, st.want.Last)
			}
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	long := strings.Repeat("x", boltseq.MaxKeyLen+1)
	tests := []struct {
		name string
		call func(ctx context.Context) error
		msg  string
	}{
		{"Allocate n=0", func(ctx context.Context) error {
			_, err := s.Allocate(ctx, "k", 0)
			return err
		}, `boltseq: allocate "k" with n=0: sequence: invalid argument`},
		{"Allocate n<0", func(ctx context.Context) error {
			_, err := s.Allocate(ctx, "k", math.MinInt64)
			return err
		}, `boltseq: allocate "k" with n=-9223372036854775808: sequence: invalid argument`},
		{"Allocate key too long", func(ctx context.Context) error {
			_, err := s.Allocate(ctx, long, 1)
			return err
		}, `boltseq: allocate: key of 32768 bytes is longer than 32767: sequence: invalid argument`},
		{"Floor negative", func(ctx context.Context) error {
			return s.Floor(ctx, "k", -1)
		}, `boltseq: floor "k" to -1: negative floor: sequence: invalid argument`},
		{"Floor key too long", func(ctx context.Context) error {
			return s.Floor(ctx, long, 1)
		}, `boltseq: floor: key of 32768 bytes is longer than 32767: sequence: invalid argument`},
		{"Last key too long", func(ctx context.Context) error {
			_, err := s.Last(ctx, long)
			return err
		}, `boltseq: last: key of 32768 bytes is longer than 32767: sequence: invalid argument`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(t.Context())
			if !errors.Is(err, sequence.ErrInvalidArgument) {
				t.Fatalf("got %v, want an error wrapping sequence.ErrInvalidArgument", err)
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err, tt.msg)
			}
		})
	}
	if got := mustLast(t, s, "k"); got != 0 {
		t.Errorf("Last(k) = %d after rejected calls, want 0", got)
	}
}

func TestExhausted(t *testing.T) {
	tests := []struct {
		name    string
		floor   int64 // raise the key to this first
		n       int64
		want    sequence.Range // when wantErr is false
		wantErr bool
	}{
		{"whole range on a new key", 0, math.MaxInt64, sequence.Range{First: 1, Last: math.MaxInt64}, false},
		{"last numbers", math.MaxInt64 - 5, 5, sequence.Range{First: math.MaxInt64 - 4, Last: math.MaxInt64}, false},
		{"one too many", math.MaxInt64 - 5, 6, sequence.Range{}, true},
		{"nothing left", math.MaxInt64, 1, sequence.Range{}, true},
		{"huge n", 1, math.MaxInt64, sequence.Range{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, tempPath(t), boltseq.Options{})
			if err := s.Floor(t.Context(), "k", tt.floor); err != nil {
				t.Fatal(err)
			}
			r, err := s.Allocate(t.Context(), "k", tt.n)
			if tt.wantErr {
				if !errors.Is(err, sequence.ErrExhausted) {
					t.Fatalf("Allocate = %v, %v; want an error wrapping sequence.ErrExhausted", r, err)
				}
				if got := mustLast(t, s, "k"); got != tt.floor {
					t.Errorf("Last = %d after a refused allocation, want it unchanged at %d", got, tt.floor)
				}
				return
			}
			if err != nil || r != tt.want {
				t.Fatalf("Allocate = %v, %v; want %v", r, err, tt.want)
			}
		})
	}
}

func TestExhaustedMessage(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	if err := s.Floor(t.Context(), "k", math.MaxInt64-1); err != nil {
		t.Fatal(err)
	}
	_, err := s.Allocate(t.Context(), "k", 2)
	const want = `boltseq: allocate "k": 2 numbers after 9223372036854775806 would pass 9223372036854775807: sequence: key exhausted`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestFloor(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	steps := []struct {
		name     string
		floor    int64
		wantLast int64
	}{
		{"zero on a new key is a no-op", 0, 0},
		{"raises a new key", 100, 100},
		{"lower floor never lowers", 50, 100},
		{"equal floor is a no-op", 100, 100},
		{"raises again", 1000, 1000},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := s.Floor(t.Context(), "k", st.floor); err != nil {
				t.Fatal(err)
			}
			if got := mustLast(t, s, "k"); got != st.wantLast {
				t.Errorf("Last = %d, want %d", got, st.wantLast)
			}
		})
	}
	if r := mustAllocate(t, s, "k", 1); r.First != 1001 {
		t.Errorf("Allocate after floor 1000 = %v, want [1001, 1001]", r)
	}
}

func TestKeyEncoding(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, boltseq.Options{})
	keys := []string{
		"",
		"a",
		"\x00",
		"a\x00",
		"k",  // the prefix byte itself
		"ka", // prefix byte followed by "a"
		strings.Repeat("long/", 1000),
		strings.Repeat("long/", 1000) + "x",
		strings.Repeat("m", boltseq.MaxKeyLen),
	}
	// Key i gets i+1 numbers, so every counter ends at a different value and
	// any two keys sharing a counter would show.
	for i, k := range keys {
		mustAllocate(t, s, k, int64(i+1))
	}
	for i, k := range keys {
		if got := mustLast(t, s, k); got != int64(i+1) {
			t.Errorf("Last(%.20q) = %d, want %d: keys collide", k, got, i+1)
		}
	}

	infos, err := s.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want []boltseq.KeyInfo
	for i, k := range keys {
		want = append(want, boltseq.KeyInfo{Key: k, Last: int64(i + 1)})
	}
	slices.SortFunc(want, func(a, b boltseq.KeyInfo) int { return strings.Compare(a.Key, b.Key) })
	if !slices.Equal(infos, want) {
		t.Errorf("Keys returned %d entries that differ from the %d allocated", len(infos), len(want))
	}

	// The documented file format: bucket "sn.seq", key 'k'+key, value an
	// 8-byte big-endian high-water mark; bucket "sn.meta" format "1".
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw := readRaw(t, path)
	if len(raw) != len(keys) {
		t.Errorf("bucket sn.seq holds %d entries, want %d", len(raw), len(keys))
	}
	for i, k := range keys {
		v, ok := raw["k"+k]
		if !ok || len(v) != 8 || binary.BigEndian.Uint64(v) != uint64(i+1) {
			t.Errorf("raw entry for %.20q = %x, want the 8-byte big-endian value %d", k, v, i+1)
		}
	}
}

// readRaw returns the entries of the "sn.seq" bucket of the file at path,
// and checks the format marker.
func readRaw(t *testing.T, path string) map[string][]byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw := make(map[string][]byte)
	err = db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte("sn.meta")).Get([]byte("format")); string(v) != "1" {
			t.Errorf("format marker %q, want \"1\"", v)
		}
		return tx.Bucket([]byte("sn.seq")).ForEach(func(k, v []byte) error {
			raw[string(k)] = slices.Clone(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// writeRaw stores value under the bbolt key k in bucket of the file at path.
func writeRaw(t *testing.T, path, bucket string, k, value []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		return b.Put(k, value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCorruptValue(t *testing.T) {
	tests := []struct {
		name  string
		value []byte
		msg   string
	}{
		{"short", []byte{1, 2, 3}, `key "bad" has a 3-byte value, want 8`},
		{"long", make([]byte, 9), `key "bad" has a 9-byte value, want 8`},
		{"empty", []byte{}, `key "bad" has a 0-byte value, want 8`},
		{"above MaxInt64", []byte{0x80, 0, 0, 0, 0, 0, 0, 1}, `key "bad" has the value 9223372036854775809, above the largest number 9223372036854775807`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempPath(t)
			s := open(t, path, boltseq.Options{})
			mustAllocate(t, s, "good", 1)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			writeRaw(t, path, "sn.seq", []byte("kbad"), tt.value)

			s = open(t, path, boltseq.Options{})
			ctx := t.Context()
			calls := []struct {
				name string
				err  error
			}{
				{"Allocate", func() error { _, err := s.Allocate(ctx, "bad", 1); return err }()},
				{"Floor", s.Floor(ctx, "bad", 1<<40)},
				{"Last", func() error { _, err := s.Last(ctx, "bad"); return err }()},
				{"Keys", func() error { _, err := s.Keys(ctx); return err }()},
			}
			wantMsg := "boltseq: corrupt file: " + path + ": " + tt.msg
			for _, c := range calls {
				if !errors.Is(c.err, boltseq.ErrCorrupt) {
					t.Errorf("%s: got %v, want an error wrapping ErrCorrupt", c.name, c.err)
				} else if c.err.Error() != wantMsg {
					t.Errorf("%s: message %q, want %q", c.name, c.err, wantMsg)
				}
			}
			// The other keys still work.
			if r := mustAllocate(t, s, "good", 1); r.First != 2 {
				t.Errorf("Allocate(good) = %v, want [2, 2]", r)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := readRaw(t, path)["kbad"]; !slices.Equal(got, tt.value) {
				t.Errorf("corrupt value now %x, want it left as %x", got, tt.value)
			}
		})
	}
}

func TestKeysRejectsForeignEntry(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, boltseq.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, path, "sn.seq", []byte("xyz"), make([]byte, 8))
	s = open(t, path, boltseq.Options{})
	if _, err := s.Keys(t.Context()); !errors.Is(err, boltseq.ErrCorrupt) {
		t.Errorf("Keys = %v, want an error wrapping ErrCorrupt", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	garbageData := []byte(strings.Repeat("this is not a bbolt file\n", 1000))
	if err := os.WriteFile(garbage, garbageData, 0o600); err != nil {
		t.Fatal(err)
	}
	otherFormat := filepath.Join(dir, "v2.db")
	writeRaw(t, otherFormat, "sn.meta", []byte("format"), []byte("2"))
	noSeq := filepath.Join(dir, "noseq.db")
	writeRaw(t, noSeq, "sn.meta", []byte("format"), []byte("1"))

	tests := []struct {
		name   string
		path   string
		is     error // nil: only check the message
		prefix string
	}{
		{"empty path", "", sequence.ErrInvalidArgument, "boltseq: open: empty path"},
		{"missing directory", filepath.Join(dir, "no/such/sn.db"), fs.ErrNotExist,
			"boltseq: open " + filepath.Join(dir, "no/such/sn.db") + ": no such file or directory (the directory " +
				filepath.Join(dir, "no/such") + " must exist)"},
		{"directory", dir, nil, "boltseq: open " + dir + ": is a directory"},
		{"not a bbolt file", garbage, nil, "boltseq: open " + garbage + ": "},
		{"unknown format", otherFormat, boltseq.ErrCorrupt,
			`boltseq: corrupt file: ` + otherFormat + `: unknown format "2" in bucket "sn.meta" (this version reads "1")`},
		{"missing bucket", noSeq, boltseq.ErrCorrupt,
			`boltseq: corrupt file: ` + noSeq + `: bucket "sn.seq" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := boltseq.Open(tt.path, boltseq.Options{LockTimeout: 50 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if errors.Is(err, boltseq.ErrLocked) {
				t.Errorf("error %v wraps ErrLocked", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), tt.prefix) {
				t.Errorf("message %q, want it to start with %q", err, tt.prefix)
			}
		})
	}
	if data, err := os.ReadFile(garbage); err != nil || !slices.Equal(data, garbageData) {
		t.Errorf("Open changed a file that is not a bbolt database")
	}
}

func TestOpenMode(t *testing.T) {
	tests := []struct {
		name string
		opts boltseq.Options
		want os.FileMode
	}{
		{"zero options", boltseq.Options{}, 0o600},
		{"explicit mode", boltseq.Options{Mode: 0o640}, 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempPath(t)
			s := open(t, path, tt.opts)
			if s.Path() != path {
				t.Errorf("Path() = %q, want %q", s.Path(), path)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.want {
				t.Errorf("file mode %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	mustAllocate(t, s, "k", 1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	tests := []struct {
		name string
		err  error
	}{
		{"Allocate", func() error { _, err := s.Allocate(ctx, "k", 1); return err }()},
		{"Floor", s.Floor(ctx, "k", 10)},
		{"Last", func() error { _, err := s.Last(ctx, "k"); return err }()},
		{"Keys", func() error { _, err := s.Keys(ctx); return err }()},
		{"Close", s.Close()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, sequence.ErrClosed) {
				t.Errorf("got %v, want an error wrapping sequence.ErrClosed", tt.err)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	mustAllocate(t, s, "k", 5)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		err  error
	}{
		{"Allocate", func() error { _, err := s.Allocate(ctx, "k", 1); return err }()},
		{"Floor", s.Floor(ctx, "k", 100)},
		{"Last", func() error { _, err := s.Last(ctx, "k"); return err }()},
		{"Keys", func() error { _, err := s.Keys(ctx); return err }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, context.Canceled) {
				t.Errorf("got %v, want an error wrapping context.Canceled", tt.err)
			}
		})
	}
	if got := mustLast(t, s, "k"); got != 5 {
		t.Errorf("Last = %d after cancelled calls, want 5", got)
	}
}

func TestRestart(t *testing.T) {
	path := tempPath(t)
	var maxLast int64
	for round := range 3 {
		s := open(t, path, boltseq.Options{})
		for i := range 5 {
			r := mustAllocate(t, s, "k", int64(1+i))
			if r.First <= maxLast {
				t.Fatalf("round %d: Allocate = %v, not above %d reserved before", round, r, maxLast)
			}
			maxLast = r.Last
		}
		if err := s.Floor(t.Context(), "floored", int64(1000*(round+1))); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s := open(t, path, boltseq.Options{})
	if got := mustLast(t, s, "k"); got != maxLast {
		t.Errorf("Last(k) after reopening = %d, want %d", got, maxLast)
	}
	if got := mustLast(t, s, "floored"); got != 3000 {
		t.Errorf("Last(floored) after reopening = %d, want 3000", got)
	}
}

func TestLockSameProcess(t *testing.T) {
	path := tempPath(t)
	first := open(t, path, boltseq.Options{})
	tests := []struct {
		name    string
		timeout time.Duration
		msg     string
	}{
		{"short wait", 50 * time.Millisecond, "boltseq: " + path + " is in use by another process (waited 50ms)"},
		{"no wait", -1, "boltseq: " + path + " is in use by another process (waited 0s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := boltseq.Open(path, boltseq.Options{LockTimeout: tt.timeout})
			if err == nil {
				s.Close()
				t.Fatal("second Open of the same file succeeded")
			}
			if !errors.Is(err, boltseq.ErrLocked) {
				t.Fatalf("got %v, want an error wrapping ErrLocked", err)
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err, tt.msg)
			}
		})
	}
	// The first Store is unharmed and, once closed, frees the file.
	mustAllocate(t, first, "k", 1)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := open(t, path, boltseq.Options{LockTimeout: 50 * time.Millisecond})
	if r := mustAllocate(t, second, "k", 1); r.First != 2 {
		t.Errorf("Allocate after reopening = %v, want [2, 2]", r)
	}
}

func TestLockOtherProcess(t *testing.T) {
	tests := []struct {
		name    string
		release func(cmd *exec.Cmd, stdin io.WriteCloser) error
	}{
		{"holder closes", func(_ *exec.Cmd, stdin io.WriteCloser) error { return stdin.Close() }},
		{"holder is killed", func(cmd *exec.Cmd, _ io.WriteCloser) error { return cmd.Process.Kill() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempPath(t)
			cmd, stdin, stdout := startHelper(t, "hold", path)
			if line, err := stdout.ReadString('\n'); line != "ready\n" {
				t.Fatalf("helper said %q, %v; want ready", line, err)
			}

			s, err := boltseq.Open(path, boltseq.Options{LockTimeout: 50 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded while another process holds the file")
			}
			if !errors.Is(err, boltseq.ErrLocked) {
				t.Fatalf("got %v, want an error wrapping ErrLocked", err)
			}
			want := "boltseq: " + path + " is in use by another process (waited 50ms)"
			if err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}

			if err := tt.release(cmd, stdin); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait() // the lock goes with the process
			s = open(t, path, boltseq.Options{LockTimeout: 50 * time.Millisecond})
			mustAllocate(t, s, "k", 1)
		})
	}
}

// TestCrashDurability kills a process that is allocating and checks that
// every range it reported (after Allocate returned) survived. SIGKILL leaves
// the kernel's page cache intact, so this shows that Allocate returns only
// after its transaction is committed to the file, not that the disk honours
// fsync; that part rests on bbolt syncing every commit, which Open never
// disables.
func TestCrashDurability(t *testing.T) {
	path := tempPath(t)
	cmd, _, stdout := startHelper(t, "allocate", path)

	var acked []int64
	readLine := func() bool {
		line, err := stdout.ReadString('\n')
		if err != nil { // EOF; a partial line is never a complete report
			return false
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(line, "\n"), 10, 64)
		if err != nil {
			t.Fatalf("helper printed %q", line)
		}
		acked = append(acked, v)
		return true
	}
	for len(acked) < 300 {
		if !readLine() {
			t.Fatalf("helper stopped after %d allocations", len(acked))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for readLine() { // what the child wrote before it died
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, want death by SIGKILL", err)
	}

	for i := 1; i < len(acked); i++ {
		if acked[i] <= acked[i-1] {
			t.Fatalf("helper reported %d after %d", acked[i], acked[i-1])
		}
	}
	maxAcked := acked[len(acked)-1]
	s := open(t, path, boltseq.Options{})
	last := mustLast(t, s, crashKey)
	if last < maxAcked {
		t.Fatalf("after the crash Last = %d, below %d, which Allocate had returned", last, maxAcked)
	}
	if r := mustAllocate(t, s, crashKey, 1); r.First <= maxAcked {
		t.Errorf("after the crash Allocate = %v, not above %d", r, maxAcked)
	}
	t.Logf("%d allocations acknowledged before SIGKILL; last %d, mark on disk %d", len(acked), maxAcked, last)
}

func TestConcurrentAllocate(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	const workers, calls = 8, 50
	ranges := make([][]sequence.Range, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				r, err := s.Allocate(t.Context(), "k", int64(1+(w+i)%5))
				if err != nil {
					errs[w] = err
					return
				}
				ranges[w] = append(ranges[w], r)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(ranges...)
	slices.SortFunc(all, func(a, b sequence.Range) int { return cmp.Compare(a.First, b.First) })
	// One store hands out numbers without gaps, so the ranges must tile
	// [1, total] exactly: disjoint and nothing lost.
	next := int64(1)
	for _, r := range all {
		if r.First != next {
			t.Fatalf("range %v follows %d: want ranges that tile [1, total]", r, next-1)
		}
		next = r.Last + 1
	}
	if got := mustLast(t, s, "k"); got != next-1 {
		t.Errorf("Last = %d, want %d", got, next-1)
	}
}

func BenchmarkAllocate(b *testing.B) {
	s, err := boltseq.Open(filepath.Join(b.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Allocate(ctx, "bench", 1000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocations/s")
}

func BenchmarkAllocateParallel(b *testing.B) {
	s, err := boltseq.Open(filepath.Join(b.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Allocate(ctx, "bench", 1000); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocations/s")
}

// TestCloseWhileAllocating closes a Store under load: every call either
// completes or fails with ErrClosed, and what completed is on disk.
func TestCloseWhileAllocating(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, boltseq.Options{})
	const workers = 4
	maxLast := make([]int64, workers)
	errs := make([]error, workers)
	started := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := s.Allocate(t.Context(), "k", 1)
				if i == 0 {
					started <- struct{}{}
				}
				if errors.Is(err, sequence.ErrClosed) {
					return
				}
				if err != nil {
					errs[w] = err
					return
				}
				maxLast[w] = r.Last
			}
		})
	}
	for range workers {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, boltseq.Options{})
	if last, want := mustLast(t, s, "k"), slices.Max(maxLast); last < want {
		t.Errorf("Last after reopening = %d, below %d returned before Close", last, want)
	}
}

// A file keeps its identity across opens; another file has another.
func TestStoreID(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, boltseq.Options{})
	id, err := s.StoreID(t.Context())
	if err != nil || !strings.HasPrefix(id, "boltseq ") || len(id) != len("boltseq ")+32 {
		t.Fatalf("StoreID = %q, %v; want boltseq and 32 hexadecimal digits", id, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, _ := open(t, path, boltseq.Options{}).StoreID(t.Context())
	other, _ := open(t, tempPath(t), boltseq.Options{}).StoreID(t.Context())
	if again != id || other == id {
		t.Errorf("StoreID: %q, reopened %q, another file %q; want the first two equal and the third not", id, again, other)
	}
}

func TestExpirer(t *testing.T) {
	s := open(t, tempPath(t), boltseq.Options{})
	sequencetest.RunExpirer(t, s, sequencetest.AllocDraw(s))
}

func TestJournal(t *testing.T) {
	s, err := boltseq.Open(filepath.Join(t.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sequencetest.RunJournal(t, s)
}

func TestReplayer(t *testing.T) {
	s, err := boltseq.Open(filepath.Join(t.TempDir(), "sn.db"), boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sequencetest.RunReplayer(t, claim.Of(s))
}

// The retention guard over a file: counters per second expire by this
// machine's clock (guardtest.Run).
func TestClockGuard(t *testing.T) {
	guardtest.Run(t, func(t *testing.T) guardtest.Store {
		s := must(boltseq.Open(filepath.Join(t.TempDir(), "guard.db"), boltseq.Options{}))
		t.Cleanup(func() { s.Close() })
		return s
	})
}
