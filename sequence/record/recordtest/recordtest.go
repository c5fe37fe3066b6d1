// Package recordtest checks a [record.Store]: what it keeps, the
// conditions of a commit, scans and range deletes, its clock, and many
// writers — goroutines, and OS processes killed with SIGKILL while they
// write — of which none loses an update or sees a value twice.
//
// A store's package runs it from a test:
//
//	func TestRecords(t *testing.T) {
//		recordtest.Run(t, open, where)
//	}
//
// and lets the process tests start children of its test binary:
//
//	func TestMain(m *testing.M) {
//		recordtest.Main(open)
//		os.Exit(m.Run())
//	}
package recordtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/sequence/record"
)

// Open opens, in this process, the store that where names, and returns
// it with what closes it.
type Open func(where string) (record.Store, func(), error)

// Run checks the store that open opens at where. Every test works under a
// prefix of its own, so the store may hold other records.
func Run(t *testing.T, open Open, where string) {
	n := 0
	each := func(name string, fn func(t *testing.T, s record.Store, prefix string)) {
		t.Run(name, func(t *testing.T) {
			n++
			s, closeFn, err := open(where)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(closeFn)
			// A prefix of this test's own: the store may hold others.
			fn(t, s, fmt.Sprintf("rt%d-%d/", time.Now().UnixNano()%1e9, n))
		})
	}
	each("Commit", testCommit)
	each("Scan", testScan)
	each("Invalid", testInvalid)
	each("Clock", testClock)
	each("Update", testUpdate)
	each("Concurrent", testConcurrent)
	if where == "" {
		return // the store lives in this process only
	}
	each("Processes", func(t *testing.T, _ record.Store, prefix string) { testProcesses(t, where, prefix) })
}

func get1(t *testing.T, s record.Store, k string) record.Record {
	t.Helper()
	rs, err := s.Get(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Key != k {
		t.Fatalf("Get(%q) = %+v; want one record of that key", k, rs)
	}
	return rs[0]
}

func commit(t *testing.T, s record.Store, cond []record.Record, ops ...record.Op) bool {
	t.Helper()
	ok, err := s.Commit(t.Context(), cond, ops)
	if err != nil {
		t.Fatalf("Commit(%v, %v): %v", cond, ops, err)
	}
	return ok
}

func testCommit(t *testing.T, s record.Store, p string) {
	a, b := p+"a", p+"b"
	if r := get1(t, s, a); r.Exists() || r.Value != nil {
		t.Fatalf("a key never written: %+v", r)
	}
	if !commit(t, s, []record.Record{{Key: a}}, record.Put(a, []byte("one")), record.Put(b, []byte{})) {
		t.Fatal("a put conditioned on an absent key, absent: refused")
	}
	ra, rb := get1(t, s, a), get1(t, s, b)
	if !ra.Exists() || string(ra.Value) != "one" {
		t.Fatalf("after the put: %+v", ra)
	}
	if !rb.Exists() || rb.Value == nil || len(rb.Value) != 0 {
		t.Fatalf("an empty value must exist and be empty, not nil: %+v", rb)
	}
	// A condition that does not hold: nothing is applied, not even the
	// ops before the one on the stale key.
	if commit(t, s, []record.Record{{Key: b, Version: rb.Version}, {Key: a}}, record.Put(b, []byte("x")), record.Put(a, []byte("two"))) {
		t.Fatal("a commit conditioned on an existing key being absent: applied")
	}
	if r := get1(t, s, b); !bytes.Equal(r.Value, []byte{}) || r.Version != rb.Version {
		t.Fatalf("a refused commit changed b: %+v, was %+v", r, rb)
	}
	seen := map[int64]bool{ra.Version: true, rb.Version: true}
	if !commit(t, s, []record.Record{{Key: a, Version: ra.Version}}, record.Put(a, []byte("two\x00\xff"))) {
		t.Fatal("a put conditioned on the version read: refused")
	}
	ra2 := get1(t, s, a)
	if string(ra2.Value) != "two\x00\xff" || seen[ra2.Version] {
		t.Fatalf("after the second put: %+v; a new version was wanted, not one of %v", ra2, seen)
	}
	seen[ra2.Version] = true
	if commit(t, s, []record.Record{{Key: a, Version: ra.Version}}, record.Put(a, []byte("three"))) {
		t.Fatal("a put conditioned on an old version: applied")
	}
	// Deleted and written again: a version never seen, so that a
	// condition taken before the delete fails (no ABA).
	if !commit(t, s, nil, record.Delete(a)) {
		t.Fatal("an unconditional delete: refused")
	}
	if r := get1(t, s, a); r.Exists() {
		t.Fatalf("after the delete: %+v", r)
	}
	for range 3 {
		if !commit(t, s, []record.Record{{Key: a}}, record.Put(a, []byte("again"))) {
			t.Fatal("a put on a deleted key conditioned on its absence: refused")
		}
		r := get1(t, s, a)
		if seen[r.Version] {
			t.Fatalf("key written again after a delete: version %d given before (%v)", r.Version, seen)
		}
		seen[r.Version] = true
		commit(t, s, nil, record.Delete(a))
	}
	if commit(t, s, []record.Record{{Key: a, Version: ra2.Version}}, record.Put(a, []byte("aba"))) {
		t.Fatal("a condition taken before a delete and a rewrite: held")
	}
	// Get of many keys: in order, absent ones included.
	rs, err := s.Get(t.Context(), b, p+"none", b)
	if err != nil || len(rs) != 3 || rs[0].Key != b || rs[1].Key != p+"none" || rs[1].Exists() || rs[2].Version != rs[0].Version {
		t.Fatalf("Get(b, none, b) = %+v, %v", rs, err)
	}
}

func testScan(t *testing.T, s record.Store, p string) {
	keys := []string{"a", "a/", "a/1", "a/2", "aa", "b", "Z", "é", "a/10"}
	var ops []record.Op
	for _, k := range keys {
		ops = append(ops, record.Put(p+k, []byte(k)))
	}
	commit(t, s, nil, ops...)
	scan := func(from, to string, limit int) string {
		t.Helper()
		rs, err := s.Scan(t.Context(), from, to, limit)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, r := range rs {
			if !strings.HasPrefix(r.Key, p) {
				if to == "" {
					continue // another test's, after ours
				}
				t.Fatalf("Scan of [%q, %q) gave %q", from, to, r.Key)
			}
			if !r.Exists() || string(r.Value) != r.Key[len(p):] {
				t.Fatalf("Scan gave %+v", r)
			}
			fmt.Fprintf(&b, "%s ", r.Key[len(p):])
		}
		return b.String()
	}
	// Byte order: "Z" < "a" < "é" (0xc3).
	if got, want := scan(p, record.PrefixEnd(p), 0), "Z a a/ a/1 a/10 a/2 aa b é "; got != want {
		t.Errorf("Scan of the prefix: %q; want %q (byte order)", got, want)
	}
	if got, want := scan(p+"a/", record.PrefixEnd(p+"a/"), 0), "a/ a/1 a/10 a/2 "; got != want {
		t.Errorf("Scan of a/: %q; want %q", got, want)
	}
	if got, want := scan(p+"a/1", p+"a/2", 0), "a/1 a/10 "; got != want {
		t.Errorf("Scan of [a/1, a/2): %q; want %q", got, want)
	}
	if got, want := scan(p+"a", record.PrefixEnd(p), 3), "a a/ a/1 "; got != want {
		t.Errorf("Scan with a limit of 3: %q; want %q", got, want)
	}
	commit(t, s, nil, record.DeleteRange(p+"a/", p+"a/2"))
	if got, want := scan(p, record.PrefixEnd(p), 0), "Z a a/2 aa b é "; got != want {
		t.Errorf("after deleting [a/, a/2): %q; want %q", got, want)
	}
	if got := scan(p+"é", "", 0); got != "é " {
		t.Errorf("Scan to the end from é: %q; want é and no other key of this test", got)
	}
}

func testInvalid(t *testing.T, s record.Store, p string) {
	ctx := t.Context()
	long := p + string(bytes.Repeat([]byte("k"), record.MaxKey))
	if _, err := s.Commit(ctx, nil, []record.Op{record.Put(long, nil)}); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("a put of a key of %d bytes: %v; want ErrInvalid", len(long), err)
	}
	if _, err := s.Commit(ctx, nil, []record.Op{record.Put("", nil)}); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("a put of an empty key: %v; want ErrInvalid", err)
	}
	if _, err := s.Get(ctx, long); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("a get of a key of %d bytes: %v; want ErrInvalid", len(long), err)
	}
	if _, err := s.Commit(ctx, nil, []record.Op{record.Put(p+"big", make([]byte, record.MaxValue+1))}); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("a value of %d bytes: %v; want ErrInvalid", record.MaxValue+1, err)
	}
	// A value of a megabyte: the largest every store takes as it comes
	// (etcd refuses a request over its --max-request-bytes, 1.5 MiB by
	// default).
	big := bytes.Repeat([]byte{0, 1, 0xfe}, 1<<20/3)
	if !commit(t, s, nil, record.Put(p+"big", big)) || !bytes.Equal(get1(t, s, p+"big").Value, big) {
		t.Errorf("a value of %d bytes did not come back whole", len(big))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(cctx, p+"a"); err == nil {
		t.Error("Get with a cancelled context: no error")
	}
}

func testClock(t *testing.T, s record.Store, _ string) {
	a, err := s.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if b.Before(a) {
		t.Errorf("the store's clock went back: %v then %v", a, b)
	}
	if d := time.Since(a); d > time.Minute || d < -time.Minute {
		t.Errorf("the store's clock is %v from this machine's: a test store runs here", d)
	}
}

func testUpdate(t *testing.T, s record.Store, p string) {
	ctx := t.Context()
	a, b := p+"a", p+"b"
	// Read your writes; a delete hides; a scan shows the transaction's own.
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		tx.Put(a, []byte("1"))
		if r, err := tx.Get1(a); err != nil || string(r.Value) != "1" {
			return fmt.Errorf("read after put: %+v %v", r, err)
		}
		tx.Put(b, []byte("2"))
		tx.Delete(a)
		if r, err := tx.Get1(a); err != nil || r.Exists() {
			return fmt.Errorf("read after delete: %+v %v", r, err)
		}
		rs, err := tx.Scan(p, record.PrefixEnd(p), 0)
		if err != nil || len(rs) != 1 || rs[0].Key != b {
			return fmt.Errorf("scan in the transaction: %+v %v", rs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if get1(t, s, a).Exists() || string(get1(t, s, b).Value) != "2" {
		t.Fatal("the transaction's writes did not land as written")
	}
	// A range deleted and a key in it written again, as a prune does.
	err = record.Update(ctx, s, func(tx *record.Tx) error {
		for _, k := range []string{"j/1", "j/2", "j/3", "j/4"} {
			tx.Put(p+k, []byte(k))
		}
		return nil
	})
	if err == nil {
		err = record.Update(ctx, s, func(tx *record.Tx) error {
			tx.DeleteRange(p+"j/", p+"j/4")
			tx.Put(p+"j/2", []byte("sum"))
			tx.Delete(p + "j/4")
			return nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := s.Scan(ctx, p+"j/", record.PrefixEnd(p+"j/"), 0); err != nil || len(rs) != 1 || rs[0].Key != p+"j/2" || string(rs[0].Value) != "sum" {
		t.Fatalf("after deleting j/1 to j/3, writing j/2 again and deleting j/4: %+v, %v; want j/2 alone", rs, err)
	}
	// A key of MaxKey bytes written in a range the transaction deleted;
	// a scan with a limit after a delete still fills its limit (found by
	// adversary run 3).
	long := p + "L/" + strings.Repeat("k", record.MaxKey-len(p)-2)
	err = record.Update(ctx, s, func(tx *record.Tx) error {
		tx.Put(p+"s/a", []byte("a"))
		tx.Put(p+"s/b", []byte("b"))
		tx.Put(p+"s/c", []byte("c"))
		tx.DeleteRange(p+"L/", p+"L0")
		tx.Put(long, []byte("long"))
		return nil
	})
	if err != nil {
		t.Fatalf("a key of MaxKey bytes in a range deleted by the same transaction: %v", err)
	}
	err = record.Update(ctx, s, func(tx *record.Tx) error {
		tx.Delete(p + "s/a")
		rs, err := tx.Scan(p+"s/", record.PrefixEnd(p+"s/"), 2)
		if err != nil {
			return err
		}
		if len(rs) != 2 || rs[0].Key != p+"s/b" || rs[1].Key != p+"s/c" {
			return fmt.Errorf("a scan of 2 after deleting the first: %d records; want b and c", len(rs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// An error from fn writes nothing.
	boom := errors.New("boom")
	if err := record.Update(ctx, s, func(tx *record.Tx) error { tx.Put(a, []byte("x")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update with a failing fn: %v", err)
	}
	if get1(t, s, a).Exists() {
		t.Fatal("a failed transaction wrote")
	}
	// A write in between runs fn again over what is there now.
	runs := 0
	err = record.Update(ctx, s, func(tx *record.Tx) error {
		runs++
		r, err := tx.Get1(b)
		if err != nil {
			return err
		}
		if runs == 1 {
			commit(t, s, nil, record.Put(b, []byte("20")))
		}
		tx.Put(b, append(r.Value, '!'))
		return nil
	})
	if err != nil || runs != 2 || string(get1(t, s, b).Value) != "20!" {
		t.Fatalf("Update raced once: %v, %d runs, b = %q; want 2 runs and 20!", err, runs, get1(t, s, b).Value)
	}
}

// add adds 1 to the decimal at key and returns the new value.
func add(ctx context.Context, s record.Store, key string) (int64, error) {
	var n int64
	err := record.Update(ctx, s, func(tx *record.Tx) error {
		r, err := tx.Get1(key)
		if err != nil {
			return err
		}
		n = 0
		if r.Exists() {
			if n, err = strconv.ParseInt(string(r.Value), 10, 64); err != nil {
				return fmt.Errorf("%q holds %q", key, r.Value)
			}
		}
		n++
		tx.Put(key, []byte(strconv.FormatInt(n, 10)))
		return nil
	})
	return n, err
}

func testConcurrent(t *testing.T, s record.Store, p string) {
	const workers, each = 8, 25
	k := p + "n"
	var mu sync.Mutex
	got := map[int64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				n, err := add(t.Context(), s, k)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got[n]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for n, c := range got {
		if c > 1 {
			t.Errorf("%d read-modify-writes returned %d", c, n)
		}
	}
	if r := get1(t, s, k); string(r.Value) != strconv.Itoa(workers*each) || len(got) != workers*each {
		t.Fatalf("%d workers adding %d each: the record holds %q, %d distinct values seen; want %d", workers, each, r.Value, len(got), workers*each)
	}
}
