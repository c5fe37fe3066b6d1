package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sngen/sn/sequence/journal"
)

// TestGapsVoidVerify: numbers drawn and voided are all explained, and the
// chain verifies; the controls: a journal record deleted, or edited, by
// hand makes gaps and verify fail.
func TestGapsVoidVerify(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sn.db")
	tmpl := "INV-@<seq, width=6>"
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "5")
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "3")
	ok(t, "void", "-t", tmpl, "--store", db, "--reason", "customer cancelled", "--actor", "alice", "INV-000002")
	out := strings.Join(ok(t, "gaps", "-t", tmpl, "--store", db), "\n")
	for _, want := range []string{"2\tvoid\tvoided by alice", "customer cancelled", "summary: 7 issued, 1 void"} {
		if !strings.Contains(out, want) {
			t.Errorf("sn gaps: no %q in\n%s", want, out)
		}
	}
	out = strings.Join(ok(t, "verify", "-t", tmpl, "--store", db), "\n")
	anchor := out[strings.LastIndex(out, "anchor: ")+len("anchor: "):]
	ok(t, "verify", "-t", tmpl, "--store", db, "--anchor", anchor)

	// Refusals: a number not issued yet, no reason.
	if r := runSN(t, "", nil, "void", "-t", tmpl, "--store", db, "--reason", "x", "INV-000099"); r.code == 0 || !strings.Contains(r.stderr, "not reserved yet") {
		t.Errorf("void of a number not issued: exit %d, %s", r.code, r.stderr)
	}
	if r := runSN(t, "", nil, "void", "-t", tmpl, "--store", db, "INV-000003"); r.code != 2 || !strings.Contains(r.stderr, "--reason") {
		t.Errorf("void without a reason: exit %d, %s", r.code, r.stderr)
	}

	// The controls.
	// The journal is in the file's records, each a version in 8 bytes
	// and the value.
	tamper := func(fn func(b *bolt.Bucket) error) {
		t.Helper()
		bdb, err := bolt.Open(db, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bdb.Close()
		if err := bdb.Update(func(tx *bolt.Tx) error {
			return fn(tx.Bucket([]byte("sn.kv")))
		}); err != nil {
			t.Fatal(err)
		}
	}
	seq := func(n int64) []byte { return []byte(journal.Key("INV-@<seq>", n)) }
	var saved []byte
	tamper(func(b *bolt.Bucket) error {
		saved = append([]byte(nil), b.Get(seq(2))...)
		return b.Put(seq(2), []byte(strings.Replace(string(saved), `"last":8`, `"last":9`, 1)))
	})
	r := runSN(t, "", nil, "verify", "-t", tmpl, "--store", db)
	if r.code != 1 || !strings.Contains(r.stderr, "record 2") || !strings.Contains(r.stderr, "altered") {
		t.Errorf("verify of an edited record: exit %d, %s", r.code, r.stderr)
	}
	tamper(func(b *bolt.Bucket) error { return b.Delete(seq(2)) })
	r = runSN(t, "", nil, "verify", "-t", tmpl, "--store", db)
	if r.code != 1 || !strings.Contains(r.stderr, "record 2: is missing") {
		t.Errorf("verify of a deleted record: exit %d, %s", r.code, r.stderr)
	}
	r = runSN(t, "", nil, "gaps", "-t", tmpl, "--store", db)
	if r.code != 1 || !strings.Contains(r.stdout, "6-8\tunaccounted") || !strings.Contains(r.stderr, "does not verify") {
		t.Errorf("gaps with a deleted record: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	tamper(func(b *bolt.Bucket) error { return b.Put(seq(2), saved) })
	ok(t, "verify", "-t", tmpl, "--store", db, "--anchor", anchor)
	ok(t, "gaps", "-t", tmpl, "--store", db)
}

// TestVerifyStaleSnapshot: a store file put back from an old copy has a
// journal that verifies by itself, and numbers it will issue again; an
// anchor taken after the copy does not verify against it. The control:
// the same anchor verifies against the file before it was put back.
func TestVerifyStaleSnapshot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sn.db")
	tmpl := "INV-@<seq, width=6>"
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "3")
	snapshot, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "2")
	out := strings.Join(ok(t, "verify", "-t", tmpl, "--store", db), "\n")
	anchor := out[strings.LastIndex(out, "anchor: ")+len("anchor: "):]
	ok(t, "verify", "-t", tmpl, "--store", db, "--anchor", anchor) // the control
	if err := os.WriteFile(db, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	ok(t, "verify", "-t", tmpl, "--store", db) // alone, the old journal holds
	r := runSN(t, "", nil, "verify", "-t", tmpl, "--store", db, "--anchor", anchor)
	if r.code != 1 || !strings.Contains(r.stderr, "anchor") {
		t.Errorf("verify of an old copy against a later anchor: exit %d, %s", r.code, r.stderr)
	}
}

// TestPruneSigned: sn prune needs the private key, and signs; a pruned
// journal verifies with its public key (an anchor taken before the prune
// too), and sn verify and sn gaps without it, or with another key, fail
// naming the key it needs. keygen never overwrites a key. The control is
// the same journal verifying before the prune without any key.
func TestPruneSigned(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sn.db")
	tmpl := "INV-@<seq, width=6>"
	seal, other := filepath.Join(dir, "seal"), filepath.Join(dir, "other")
	out := strings.Join(ok(t, "keygen", "--out", seal), "\n")
	if !strings.Contains(out, seal+".key signs prunes") {
		t.Errorf("keygen: %s", out)
	}
	ok(t, "keygen", "--out", other)
	if r := runSN(t, "", nil, "keygen", "--out", seal); r.code == 0 || !strings.Contains(r.stderr, "never overwrites") {
		t.Errorf("keygen over a key: exit %d, %s", r.code, r.stderr)
	}
	if fi, err := os.Stat(seal + ".key"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the private key's mode: %v %v", fi.Mode(), err)
	}
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "5")
	out = strings.Join(ok(t, "verify", "-t", tmpl, "--store", db), "\n")
	before := out[strings.LastIndex(out, "anchor: ")+len("anchor: "):]
	ok(t, "next", "-t", tmpl, "--store", db, "-n", "3")

	if r := runSN(t, "", nil, "prune", "-t", tmpl, "--store", db, "--yes"); r.code != 2 || !strings.Contains(r.stderr, "--seal-key") {
		t.Errorf("prune without a key: exit %d, %s", r.code, r.stderr)
	}
	if r := runSN(t, "", nil, "prune", "-t", tmpl, "--store", db, "--seal-key", seal+".pub", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "PRIVATE KEY") {
		t.Errorf("prune with the public key: exit %d, %s", r.code, r.stderr)
	}
	out = strings.Join(ok(t, "prune", "-t", tmpl, "--store", db, "--seal-key", seal+".key", "--yes"), "\n")
	if !strings.Contains(out, "signed by key") || !strings.Contains(out, "8 issued") {
		t.Errorf("prune: %s", out)
	}
	for _, cmd := range []string{"verify", "gaps"} {
		r := runSN(t, "", nil, cmd, "-t", tmpl, "--store", db)
		if r.code != 1 || !strings.Contains(r.stderr, "give its public key") {
			t.Errorf("%s of a pruned journal without the key: exit %d, %s", cmd, r.code, r.stderr)
		}
		r = runSN(t, "", nil, cmd, "-t", tmpl, "--store", db, "--public-key", other+".pub")
		if r.code != 1 || !strings.Contains(r.stderr, "not one of the keys trusted") {
			t.Errorf("%s with another key: exit %d, %s", cmd, r.code, r.stderr)
		}
		ok(t, cmd, "-t", tmpl, "--store", db, "--public-key", seal+".pub")
	}
	out = strings.Join(ok(t, "verify", "-t", tmpl, "--store", db, "--public-key", seal+".pub", "--anchor", before), "\n")
	if !strings.Contains(out, "signed by key") {
		t.Errorf("verify of a pruned journal: %s", out)
	}
}

// TestTenantsRelativePath: two tenants whose bolt paths reach one file,
// one relative to the config's directory and one absolute, are refused
// when sn runs from another directory (it opens relative paths against
// the config's directory, and checks them there too), naming both
// templates. The control: the same config with two files issues.
func TestTenantsRelativePath(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	write := func(name, second string) string {
		return writeConfig(t, dir, name, fmt.Sprintf(`tenants:
  shop: {store: {path: r5.db}}
  billing: {store: {path: %q}}
templates:
  order: {template: "INV-@<seq, width=6>", tenant: shop}
  invoice: {template: "INV-@<seq, width=6>", tenant: billing}
`, second))
	}
	run := func(cfg, name string) result {
		cmd := snCommand(t, nil, "next", "--config", cfg, name)
		cmd.Dir = elsewhere
		return runCmd(t, cmd)
	}
	shared := write("shared.yaml", filepath.Join(dir, "r5.db"))
	for _, name := range []string{"order", "invoice"} {
		if r := run(shared, name); r.code == 0 || !strings.Contains(r.stderr, "order") || !strings.Contains(r.stderr, "invoice") {
			t.Errorf("sn next %s from another directory, two tenants on one file: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
		}
	}
	apart := write("apart.yaml", filepath.Join(dir, "other.db"))
	for _, name := range []string{"order", "invoice"} {
		if r := run(apart, name); r.code != 0 || strings.TrimSpace(r.stdout) != "INV-000001" {
			t.Errorf("control: sn next %s with a file each: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
		}
	}
}
