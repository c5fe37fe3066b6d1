package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/internal/etcdtest"
	"github.com/sngen/sn/internal/mysqltest"
	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/internal/testserver"
	"github.com/sngen/sn/sequence/boltseq"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// snBin is the sn binary built by TestMain.
var snBin string

// TestMain builds the binary, and runs the tests with the PostgreSQL and
// MariaDB servers of pgtest and mysqltest and the Redis servers of redistest, stopped when the tests end.
func TestMain(m *testing.M) {
	if os.Getenv(remoteClientEnv) != "" {
		os.Exit(remoteClient())
	}
	if os.Getenv(bareEnv) != "" {
		os.Exit(bareServer())
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "sn-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	snBin = filepath.Join(dir, "sn")
	// Static, as the image holds it (TestImage puts this one in): one
	// build for both.
	build := exec.Command("go", "build", "-trimpath", "-o", snBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sn:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := testserver.Chain(m.Run, pgtest.Run, mysqltest.Run, redistest.Run, etcdtest.Run)
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a run of sn did.
type result struct {
	code           int
	stdout, stderr string
}

// runSN runs the binary with args and stdin in a clean environment whose
// state directory is a temporary one unless env says otherwise.
func runSN(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := snCommand(t, env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// runCmd runs cmd, an sn command, and returns what it did.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running sn %q: %v", cmd.Args[1:], err)
	}
	return result{code, out.String(), errOut.String()}
}

func snCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(snBin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...)
	return cmd
}

// ok runs sn, which must succeed and write nothing to stderr, and returns
// its output lines.
func ok(t *testing.T, args ...string) []string {
	t.Helper()
	r := runSN(t, "", nil, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("sn %q: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return lines(r.stdout)
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got); run go test -update if the change is right:\n%s", path, diff)
	}
}

const luhnTpl = "SN-@<seq, width=8>-@<checksum, algo=luhn>"

func TestHelp(t *testing.T) {
	tests := []struct {
		args   []string
		golden string
	}{
		{[]string{"help"}, "help.golden"},
		{[]string{"-h"}, "help.golden"},
		{[]string{"--help"}, "help.golden"},
		{[]string{"help", "next"}, "help-next.golden"},
		{[]string{"next", "-h"}, "help-next.golden"},
		{[]string{"help", "validate"}, "help-validate.golden"},
		{[]string{"help", "explain"}, "help-explain.golden"},
		{[]string{"preview", "--help"}, "help-preview.golden"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runSN(t, "", nil, tt.args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			golden(t, tt.golden, r.stdout)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		first string // the first line of stderr
		usage string // the usage that follows: "sn" or a command
	}{
		{"no command", nil, "sn: no command given", "sn"},
		{"unknown command", []string{"issue"}, `sn: unknown command "issue"`, "sn"},
		{"the old verb for validate", []string{"check"}, `sn: unknown command "check": sn validate checks numbers (as Generator.Validate and POST .../validate do)`, "sn"},
		{"flag before the command", []string{"-t", "x", "next"}, "sn: flags go after the command, as in: sn next -t ...", "sn"},
		{"help for an unknown command", []string{"help", "nxt"}, `sn help: unknown command "nxt"`, "sn"},
		{"a misspelt command", []string{"nxt", "-t", "x@<seq>"}, `sn: unknown command "nxt", did you mean "next"?`, "sn"},
		{"a misspelt flag", []string{"serve", "--config", "sn.yaml", "--lisen", ":8080"}, "sn serve: flag provided but not defined: -lisen, did you mean --listen?", "serve"},
		{"health with an argument", []string{"health", "127.0.0.1:8080"}, `sn health: unexpected argument "127.0.0.1:8080" (give the address as --url http://127.0.0.1:8080/readyz)`, "health"},
		{"health with a bad URL", []string{"health", "--url", "127.0.0.1:8080"}, `sn health: --url "127.0.0.1:8080": want an http or https URL such as http://127.0.0.1:8080/readyz`, "health"},
		{"no template", []string{"next"}, "sn next: give a template with -t TEMPLATE, or --config FILE and a template name", "next"},
		{"unknown flag", []string{"next", "-t", "x@<seq>", "--count", "3"}, "sn next: flag provided but not defined: -count", "next"},
		{"negative count", []string{"next", "-t", "x@<seq>", "-n", "-1"}, "sn next: -n -1: want 0 or more", "next"},
		{"bad count", []string{"preview", "-t", "x@<seq>", "-n", "many"}, `sn preview: invalid value "many" for flag -n: parse error`, "preview"},
		{"template and config", []string{"explain", "-t", "x@<seq>", "--config", "c.yaml"}, "sn explain: give either -t TEMPLATE or --config FILE and a template name, not both", "explain"},
		{"bad var", []string{"next", "-t", "x@<seq>", "--var", "area"}, `sn next: invalid value "area" for flag -var: want NAME=VALUE, got "area"`, "next"},
		{"var twice", []string{"next", "-t", "x@<seq>", "--var", "a=1", "--var", "a=2"}, `sn next: invalid value "a=2" for flag -var: a given twice`, "next"},
		{"bad at", []string{"preview", "-t", "x@<seq>", "--at", "yesterday"}, `sn preview: invalid value "yesterday" for flag -at: want a time such as 2017-03-04T10:00:00Z, 2017-03-04T18:00:00+08:00 or 2017-03-04, got "yesterday"`, "preview"},
		{"strict without redis", []string{"next", "-t", "x@<seq>", "--strict"}, "sn next: --strict needs --redis URL", "next"},
		{"store with redis", []string{"next", "-t", "x@<seq>", "--redis", "redis://x", "--store", "a.db"}, "sn next: --store is not used with --redis (unless --strict --single-host): give --ledger DSN to keep the numbers in a database", "next"},
		{"store with ledger", []string{"next", "-t", "x@<seq>", "--ledger", "postgres://db/x", "--store", "a.db"}, "sn next: --store is not used with --ledger: the numbers are kept in the ledger", "next"},
		// A file of this machine's never backs a Redis that others may
		// share, unless --single-host says none does.
		{"strict without ledger", []string{"next", "-t", "x@<seq>", "--redis", "redis://x", "--strict"}, "sn next: --strict needs --ledger DSN, a database that every machine using the Redis shares, or --single-host when this host alone uses it (the --store file then backs the counter)", "next"},
		{"strict with a store file", []string{"floor", "-t", "x@<seq>", "--redis", "redis://x", "--strict", "--store", "a.db", "x5"}, "sn floor: --strict needs --ledger DSN, a database that every machine using the Redis shares, or --single-host when this host alone uses it (the --store file then backs the counter)", "floor"},
		{"single host without strict", []string{"next", "-t", "x@<seq>", "--redis", "redis://x", "--single-host"}, "sn next: --single-host goes with --redis URL --strict: it says that this host alone uses the Redis, so that the --store file may back its counter", "next"},
		{"single host with ledger", []string{"next", "-t", "x@<seq>", "--redis", "redis://x", "--strict", "--single-host", "--ledger", "mysql://db/x"}, "sn next: give either --ledger or --single-host: a ledger is shared by every machine, --single-host backs the counter with the --store file of this one", "next"},
		{"empty ledger", []string{"next", "-t", "x@<seq>", "--ledger="}, "sn next: empty value for --ledger: want a database URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379", "next"},
		{"store flag for check", []string{"validate", "-t", "x@<seq>", "--store", "a.db"}, "sn validate: flag provided but not defined: -store", "validate"},
		{"extra argument", []string{"explain", "-t", "x@<seq>", "more"}, `sn explain: unexpected argument "more"`, "explain"},
		{"huge count", []string{"next", "-t", "x@<seq>", "-n", "99999999999999999999"}, `sn next: invalid value "99999999999999999999" for flag -n: value out of range`, "next"},
		// An empty value, as from --redis "$URL" with URL unset, must not
		// fall back to the default store.
		{"empty template", []string{"next", "-t", ""}, "sn next: empty value for -t: want a template", "next"},
		{"empty redis", []string{"next", "-t", "x@<seq>", "--redis", ""}, "sn next: empty value for --redis: want a URL such as redis://localhost:6379/0", "next"},
		{"empty store", []string{"next", "-t", "x@<seq>", "--store="}, "sn next: empty value for --store: want a file path (leave --store out for the default store)", "next"},
		{"empty config", []string{"validate", "--config", "", "orders"}, "sn validate: empty value for --config: want a file name", "validate"},
		{"preview count too large", []string{"preview", "-t", "x@<seq>", "-n", "100001"}, "sn preview: -n 100001: want 0 to 100000 (preview holds its samples in memory; sn next issues more)", "preview"},
		{"missing vars", []string{"next", "-t", "@<seq>-@<area>-@<unit>"}, "sn next: the template needs --var area=VALUE --var unit=VALUE", "next"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSN(t, "", nil, tt.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q, want nothing", r.stdout)
			}
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if first != tt.first {
				t.Errorf("stderr:\n got %s\nwant %s", first, tt.first)
			}
			// sn's own usage is one line and a pointer to sn help: the
			// message stays in sight.
			wantUsage := "\nUsage: sn COMMAND [flags] [arguments] (next, "
			if tt.usage == "sn" && !strings.HasSuffix(rest, "\nRun 'sn help' for the commands and flags.\n") {
				t.Errorf("stderr does not end with the pointer to sn help:\n%s", rest)
			}
			if tt.usage != "sn" {
				wantUsage = "\nUsage: sn " + tt.usage + " "
				// The synopsis only, so that the message stays in sight.
				if end := "\nRun 'sn help " + tt.usage + "' for the flags and examples.\n"; !strings.HasSuffix(rest, end) {
					t.Errorf("stderr does not end with %q:\n%s", end, rest)
				}
			}
			if !strings.HasPrefix(rest, wantUsage) {
				t.Errorf("stderr after the message does not start with %q:\n%s", wantUsage, rest)
			}
		})
	}
}

func TestBadTemplate(t *testing.T) {
	for _, cmd := range []string{"next", "validate", "explain", "preview"} {
		t.Run(cmd, func(t *testing.T) {
			r := runSN(t, "", nil, cmd, "-t", "SN-@<seq, widht=8>", "SN-1")
			if cmd != "validate" {
				r = runSN(t, "", nil, cmd, "-t", "SN-@<seq, widht=8>")
			}
			want := "sn: template: offset 10: seq: unknown argument \"widht\": did you mean width?\n" +
				"\tSN-@<seq, widht=8>\n" +
				"\t          ^\n"
			if r.code != 2 || r.stdout != "" || r.stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and stderr:\n%s", r.code, r.stdout, r.stderr, want)
			}
		})
	}
}

func TestNextContinuesAcrossRuns(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	first := ok(t, "next", "-t", luhnTpl, "-n", "5", "--store", store)
	want := []string{"SN-00000001-8", "SN-00000002-6", "SN-00000003-4", "SN-00000004-2", "SN-00000005-9"}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Fatalf("first run (-want +got):\n%s", diff)
	}
	second := ok(t, "next", "--store", store, "-n", "3", "-t", luhnTpl)
	for _, s := range second {
		for _, f := range first {
			if s <= f {
				t.Errorf("second run's %s is not above first run's %s", s, f)
			}
		}
	}
	// Each run reserves exactly what it prints: nothing is skipped.
	if got := second[0]; got != "SN-00000006-7" {
		t.Errorf("second run starts at %s, want SN-00000006-7", got)
	}
	// Another template counts on its own.
	if got := ok(t, "next", "--store", store, "-t", "QJ@<seq, width=6>"); !cmp.Equal(got, []string{"QJ000001"}) {
		t.Errorf("other template: %q, want QJ000001", got)
	}
	if got := ok(t, "next", "--store", store, "-t", luhnTpl, "-n", "0"); got != nil {
		t.Errorf("-n 0 printed %q", got)
	}
}

func TestNextDefaultStore(t *testing.T) {
	state, home := t.TempDir(), t.TempDir()
	for _, env := range [][]string{{"XDG_STATE_HOME=" + state}, {"XDG_STATE_HOME=", "HOME=" + home}} {
		for run := 1; run <= 2; run++ {
			r := runSN(t, "", env, "next", "-t", "A@<seq>")
			if r.code != 0 || r.stdout != fmt.Sprintf("A%d\n", run) {
				t.Errorf("%q run %d: exit %d, stdout %q, stderr %s", env, run, r.code, r.stdout, r.stderr)
			}
			// The first run says, once, that it made a store of this
			// machine's, and where.
			said := strings.Contains(r.stderr, "sn: created a new store, ") && strings.Contains(r.stderr, "sn.db") && strings.Contains(r.stderr, "one shared store")
			if said != (run == 1) {
				t.Errorf("%q run %d: stderr %q", env, run, r.stderr)
			}
		}
	}
	for _, dir := range []string{filepath.Join(state, "sn"), filepath.Join(home, ".local", "state", "sn")} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", dir, fi.Mode().Perm())
		}
		if _, err := os.Stat(filepath.Join(dir, "sn.db")); err != nil {
			t.Error(err)
		}
	}
}

func TestNextStoreInUse(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	held, err := boltseq.Open(store, boltseq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := runSN(t, "", nil, "next", "-t", "A@<seq>", "--store", store, "--wait", "50ms")
	want := fmt.Sprintf("sn: boltseq: %s is in use by another process (waited 50ms)\n", store)
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", r.code, r.stdout, r.stderr, want)
	}
	held.Close()
	if got := ok(t, "next", "-t", "A@<seq>", "--store", store); !cmp.Equal(got, []string{"A1"}) {
		t.Errorf("after release: %q", got)
	}
	r = runSN(t, "", nil, "next", "-t", "A@<seq>", "--store", filepath.Join(t.TempDir(), "no", "dir", "sn.db"))
	if r.code != 1 || !strings.HasPrefix(r.stderr, "sn: ") || !strings.Contains(r.stderr, "no such file or directory") {
		t.Errorf("missing directory: exit %d, stderr %s", r.code, r.stderr)
	}
	// No place for the default store: say how to give one.
	home := filepath.Join(t.TempDir(), "home")
	if err := os.WriteFile(home, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runSN(t, "", []string{"XDG_STATE_HOME=", "HOME=" + home}, "next", "-t", "A@<seq>")
	want = fmt.Sprintf("sn: creating the store's directory: mkdir %s: not a directory (give another store with --store PATH)\n", home)
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("default store impossible: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// Concurrent runs on one store wait for each other (up to --wait) and
// never issue a number twice.
func TestNextConcurrentRuns(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	const runs, each = 4, 250
	outs := make([][]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runSN(t, "", nil, "next", "-t", "N@<seq>", "-n", strconv.Itoa(each), "--store", store)
			if r.code != 0 {
				t.Errorf("run %d: exit %d: %s", i, r.code, r.stderr)
			}
			outs[i] = lines(r.stdout)
		}()
	}
	wg.Wait()
	var all []int
	for _, out := range outs {
		for _, s := range out {
			n, err := strconv.Atoi(strings.TrimPrefix(s, "N"))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, n)
		}
	}
	slices.Sort(all)
	for i, n := range all {
		if n != i+1 {
			t.Fatalf("numbers of the %d runs, sorted, have %d at position %d: want 1..%d, each once", runs, n, i, runs*each)
		}
	}
	if len(all) != runs*each {
		t.Errorf("%d numbers, want %d", len(all), runs*each)
	}
}

func TestVarAndAt(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	tpl := "@<area>-@<date, format=yyyyMMdd, tz=Asia/Shanghai>-@<seq, width=3, key=area, reset=day>"
	run := func(args ...string) []string {
		return ok(t, append([]string{"next", "-t", tpl, "--store", store}, args...)...)
	}
	// 2017-03-04T20:00Z is March 5 in Shanghai (tz data is built in).
	if got, want := run("--var", "area=010", "--at", "2017-03-04T20:00:00Z", "-n", "2"), []string{"010-20170305-001", "010-20170305-002"}; !cmp.Equal(got, want) {
		t.Errorf("010: %q, want %q", got, want)
	}
	if got, want := run("--at", "2017-03-04T20:00:00Z", "--var", "area=020"), []string{"020-20170305-001"}; !cmp.Equal(got, want) {
		t.Errorf("020: %q, want %q", got, want)
	}
	if got, want := run("--at", "2017-03-05", "--var", "area=010"), []string{"010-20170305-003"}; !cmp.Equal(got, want) {
		t.Errorf("010 again: %q, want %q", got, want)
	}
	if got, want := run("--at", "2017-03-06T08:00:00+08:00", "--var", "area=010"), []string{"010-20170306-001"}; !cmp.Equal(got, want) {
		t.Errorf("next day: %q, want %q", got, want)
	}
	r := runSN(t, "", nil, "next", "-t", tpl, "--store", store)
	if first, _, _ := strings.Cut(r.stderr, "\n"); r.code != 2 || r.stdout != "" || first != "sn next: the template needs --var area=VALUE" {
		t.Errorf("missing --var: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// A variable missing or invalid is bad usage, found before a number is
// drawn, even when the sequence comes first in the template.
func TestVarCheckedBeforeDrawing(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	tpl := "@<seq, width=3>-@<area, maxlen=3>"
	for _, args := range [][]string{{"--var", "area=0101"}, {}, {"--var", "area="}} {
		r := runSN(t, "", nil, append([]string{"next", "-t", tpl, "--store", store}, args...)...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, want exit 2 and nothing", args, r.code, r.stdout)
		}
		if want := `sn: area at offset 16: variable invalid: "area" is 4 characters long, more than maxlen=3` + "\n"; len(args) == 2 && args[1] == "area=0101" && r.stderr != want {
			t.Errorf("invalid --var: stderr %q, want %q", r.stderr, want)
		}
	}
	if got := ok(t, "next", "-t", tpl, "--store", store, "--var", "area=010"); !cmp.Equal(got, []string{"001-010"}) {
		t.Errorf("after the failed runs: %q, want 001-010 (nothing drawn before)", got)
	}
	// A variable that a setter gives needs no --var.
	if got := ok(t, "next", "-t", "@<ownerKey, value=SN>-@<seq>", "--store", store); !cmp.Equal(got, []string{"SN-1"}) {
		t.Errorf("setter: %q", got)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string
	}{
		{"valid", []string{"SN-00000001-8", "SN-00000005-9"}, "", 0, []string{"SN-00000001-8: ok", "SN-00000005-9: ok"}},
		{"one invalid", []string{"SN-00000001-8", "SN-00000001-9", "SN-0001-8", "SN-00000001-8X"}, "", 1, []string{
			"SN-00000001-8: ok",
			`SN-00000001-9: invalid checksum (template offset 19): check "9" is wrong for "00000001" (luhn)`,
			`SN-0001-8: invalid seq (template offset 3): want [0-9]{8} at byte 3, found "0001-8"`,
			`SN-00000001-8X: invalid: unexpected "X" after byte 13`,
		}},
		{"stdin", nil, "SN-00000001-8\r\n\n  SN-00000002-6  \nSN-00000002-7\n", 1, []string{
			"SN-00000001-8: ok",
			"SN-00000002-6: ok",
			`SN-00000002-7: invalid checksum (template offset 19): check "7" is wrong for "00000002" (luhn)`,
		}},
		{"stdin valid", nil, "SN-00000001-8\n", 0, []string{"SN-00000001-8: ok"}},
		{"empty stdin", nil, "", 0, nil},
		{"after --", []string{"--", "-5"}, "", 1, []string{`-5: invalid text (template offset 0): want "SN-" at byte 0, found "-5"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSN(t, tt.stdin, nil, append([]string{"validate", "-t", luhnTpl}, tt.args...)...)
			if r.code != tt.code || r.stderr != "" {
				t.Errorf("exit %d (want %d), stderr %s", r.code, tt.code, r.stderr)
			}
			if diff := cmp.Diff(tt.want, lines(r.stdout)); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	got := ok(t, "explain", "-t", "@<ownerKey, value=SN>-@<date, format=yyyyMMdd>-@<seq, width=5, reset=day>-@<checksum, algo=luhn>")
	golden(t, "explain.golden", strings.Join(got, "\n")+"\n")
}

func TestPreviewConsumesNothing(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	r := runSN(t, "", env, "preview", "-t", "@<area>-@<date>-@<seq, width=3, key=area>", "--at", "2017-03-04")
	if want := "{area}-20170304-001\n{area}-20170304-002\n{area}-20170304-003\n"; r.code != 0 || r.stdout != want {
		t.Errorf("preview: exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(state, "sn")); !os.IsNotExist(err) {
		t.Errorf("preview created the store directory (stat: %v)", err)
	}

	store := filepath.Join(t.TempDir(), "sn.db")
	ok(t, "next", "-t", "P@<seq>", "-n", "2", "--store", store)
	if got := ok(t, "preview", "-t", "P@<seq>", "-n", "2", "--var", "x=1"); !cmp.Equal(got, []string{"P1", "P2"}) {
		t.Errorf("preview: %q", got)
	}
	if got := ok(t, "next", "-t", "P@<seq>", "--store", store); !cmp.Equal(got, []string{"P3"}) {
		t.Errorf("next after preview: %q, want P3", got)
	}
}

func writeConfig(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", `
store:
  backend: bolt
  path: orders.db   # next to this file
templates:
  orders:
    template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"
    floor: 100
  tickets:
    template: "QJ@<seq, width=6>"
    sequence:
      backend: memory
`)
	if got, want := ok(t, "next", "--config", cfg, "orders", "-n", "2"), []string{"SN-00000101-6", "SN-00000102-4"}; !cmp.Equal(got, want) {
		t.Errorf("orders: %q, want %q", got, want)
	}
	if got, want := ok(t, "next", "orders", "--config", cfg), []string{"SN-00000103-2"}; !cmp.Equal(got, want) {
		t.Errorf("orders again: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders.db")); err != nil {
		t.Errorf("the store is not next to the config file: %v", err)
	}
	if got := ok(t, "validate", "--config", cfg, "orders", "SN-00000103-2"); !cmp.Equal(got, []string{"SN-00000103-2: ok"}) {
		t.Errorf("check: %q", got)
	}
	if got := ok(t, "preview", "--config", cfg, "tickets", "-n", "1"); !cmp.Equal(got, []string{"QJ000001"}) {
		t.Errorf("preview: %q", got)
	}
	if got := ok(t, "explain", "--config", cfg, "tickets"); len(got) == 0 || got[0] != "template:   QJ@<seq, width=6>" {
		t.Errorf("explain: %q", got)
	}

	tests := []struct {
		name string
		args []string
		code int
		want string // stderr's first line
	}{
		{"unknown template", []string{"next", "--config", cfg, "invoices"}, 2, fmt.Sprintf(`sn: %s has no template "invoices" (it has: orders, tickets)`, cfg)},
		{"no template name", []string{"validate", "--config", cfg}, 2, fmt.Sprintf("sn validate: name a template of %s (one of: orders, tickets)", cfg)},
		{"store flags", []string{"next", "--config", cfg, "orders", "--store", "x.db"}, 2, fmt.Sprintf("sn next: %s sets its store (store.backend: bolt): --store, --ledger, --redis, --strict and --single-host do not apply", cfg)},
		{"ledger flag", []string{"floor", "--config", cfg, "orders", "--ledger", "postgres://db/x", "SN-00000001-8"}, 2, fmt.Sprintf("sn floor: %s sets its store (store.backend: bolt): --store, --ledger, --redis, --strict and --single-host do not apply", cfg)},
		{"missing file", []string{"next", "--config", filepath.Join(dir, "none.yaml"), "orders"}, 2, fmt.Sprintf("sn: config: open %s: no such file or directory", filepath.Join(dir, "none.yaml"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSN(t, "", nil, tt.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != tt.code || r.stdout != "" || first != tt.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and:\n%s", r.code, r.stdout, r.stderr, tt.code, tt.want)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeConfig(t, dir, "bad.yaml", "templates:\n  orders:\n    template: SN-@<seq, width=0>\n  tickets:\n    tempalte: QJ@<seq>\n")
	r := runSN(t, "", nil, "next", "--config", bad, "orders")
	if want := fmt.Sprintf("sn: config: %s: line 5: template \"tickets\": unknown field \"tempalte\" (known: floor, profile, sequence, template, tenant)\n", bad); r.code != 2 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and:\n%s", r.code, r.stderr, want)
	}
	bad = writeConfig(t, dir, "bad.json", `{"templates": {
  "orders": {"template": "SN-@<seq, width=0>"},
  "tickets": {"template": "QJ@<seq>", "sequence": {"backend": "mysql"}}}}`)
	r = runSN(t, "", nil, "explain", "--config", bad, "tickets")
	want := fmt.Sprintf("sn: config: %s: line 2: template \"orders\": sn: template: offset 10: seq: width=\"0\": want a whole number from 1 to 19\n", bad) +
		"\tSN-@<seq, width=0>\n" +
		"\t          ^\n" +
		fmt.Sprintf("sn: config: %s: line 3: template \"tickets\": sequence.backend \"mysql\": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite; for mysql, set backend: sql and ledger: mysql://user:password@host:3306/db)\n", bad)
	if r.code != 2 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and:\n%s", r.code, r.stderr, want)
	}

	// Each mistake names the file, the line, the template and the field.
	tests := []struct {
		name, file, data string
		want             []string // stderr's lines after the file name
	}{
		{"yaml", "typos.yaml", `store:
  backend: bolt
  path: sn.db
templates:
  orders:
    template: "SN-@<seq, width=8>"
    sequence: {backend: bolt, step: lots}
  invoices:
    template: "INV-@<seq>"
    floor: -1
    sequence:
      fetch_timeout: 5
`, []string{
			`line 7: template "orders": sequence.step: want a whole number, found "lots"`,
		}},
		{"yaml values", "values.yaml", `store:
  backend: bolt
  path: sn.db
templates:
  orders:
    template: "SN-@<seq, width=8>"
    sequence: {backend: rdis, step: 10, max_step: 5}
  invoices:
    template: "INV-@<seq>"
    floor: -1
    sequence:
      fetch_timeout: 5
`, []string{
			`line 12: template "invoices": sequence.fetch_timeout "5": want a positive duration such as "1m" or "30s"`,
			`line 10: template "invoices": floor -1: want 0 (none) or more`,
			`line 7: template "orders": sequence.backend "rdis": unknown, did you mean "redis"? (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)`,
			`line 7: template "orders": sequence.step 10: want at most max_step, 5`,
		}},
		{"json key given twice", "twice.json", `{"templates": {
  "orders": {"template": "A@<seq>"},
  "orders": {"template": "B@<seq>"}}}`, []string{
			`line 3: template "orders": defined twice (first at line 2)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeConfig(t, dir, tt.file, tt.data)
			r := runSN(t, "", nil, "next", "--config", cfg, "orders")
			want := ""
			for _, l := range tt.want {
				want += "sn: config: " + cfg + ": " + l + "\n"
			}
			if r.code != 2 || r.stdout != "" || r.stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", r.code, r.stdout, r.stderr, want)
			}
		})
	}
}

// sn next refuses a template whose numbers would restart at every run,
// before it opens any store or draws a number; the other commands take it.
func TestNextRefusesMemory(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, file, data, tpl string }{
		{"own sequence", "own.yaml", "store: {backend: bolt, path: sn.db}\ntemplates:\n  tickets: {template: \"QJ@<seq, width=6>\", sequence: {backend: memory}}\n", "tickets"},
		{"store", "store.json", `{"store": {"backend": "memory"}, "templates": {"tickets": {"template": "QJ@<seq>"}}}`, "tickets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeConfig(t, dir, tt.file, tt.data)
			for _, n := range []string{"1", "0"} {
				r := runSN(t, "", nil, "next", "--config", cfg, tt.tpl, "-n", n)
				first, rest, _ := strings.Cut(r.stderr, "\n")
				want := fmt.Sprintf(`sn next: template "tickets" uses the memory backend, whose numbers would restart at every run; give it a durable store (such as bolt) in %s, or see its numbers with sn preview`, cfg)
				if r.code != 2 || r.stdout != "" || first != want {
					t.Errorf("-n %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", n, r.code, r.stdout, r.stderr, want)
				}
				if !strings.HasPrefix(rest, "\nUsage: sn next ") {
					t.Errorf("-n %s: stderr after the message does not start with the usage:\n%s", n, rest)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "sn.db")); !os.IsNotExist(err) {
				t.Errorf("next opened the store (stat: %v)", err)
			}
			if got := ok(t, "preview", "--config", cfg, tt.tpl, "-n", "1"); len(got) != 1 || !strings.HasPrefix(got[0], "QJ") {
				t.Errorf("preview: %q", got)
			}
		})
	}
}

// sn next takes a balanced template only when every member keeps its
// numbers, and a snowflake only with leased worker ids; a balanced one
// over two files continues from run to run.
func TestNextBalancedAndSnowflake(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", `store: {backend: bolt, path: sn.db}
templates:
  files: {template: "F@<seq>", sequence: {balanced: {members: [{path: a.db}, {path: b.db}]}}}
  mixed: {template: "M@<seq>", sequence: {balanced: {members: [{path: a.db}, {backend: memory}]}}}
  ids: {template: "ID@<seq>", sequence: {backend: snowflake, worker: 3, single_process: true}}
`)
	refusals := map[string]string{
		"mixed": fmt.Sprintf(`sn next: template "mixed" is balanced over a member whose numbers would restart at every run; give every member a durable store (such as bolt) in %s, or see its numbers with sn preview`, cfg),
		"ids":   fmt.Sprintf(`sn next: template "ids" uses a fixed snowflake worker id, whose ids repeat when two runs overlap or the clock goes back between runs; lease worker ids from a Redis (url) in %s, or see its numbers with sn preview`, cfg),
	}
	for name, want := range refusals {
		r := runSN(t, "", nil, "next", "--config", cfg, name)
		if first, _, _ := strings.Cut(r.stderr, "\n"); r.code != 2 || r.stdout != "" || first != want {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", name, r.code, r.stdout, r.stderr, want)
		}
	}
	seen := map[string]bool{}
	for run := range 2 {
		got := ok(t, "next", "--config", cfg, "files", "-n", "4")
		if len(got) != 4 {
			t.Fatalf("run %d: %q", run, got)
		}
		for _, s := range got {
			if seen[s] {
				t.Errorf("run %d: %s issued again", run, s)
			}
			seen[s] = true
		}
	}
}

// A config file without a store takes the one of --store.
func TestConfigFileWithoutStore(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.json", `{"templates": {"orders": {"template": "O@<seq>", "floor": 10}}}`)
	store := filepath.Join(t.TempDir(), "cli.db")
	if got := ok(t, "next", "--config", cfg, "orders", "--store", store, "-n", "2"); !cmp.Equal(got, []string{"O11", "O12"}) {
		t.Errorf("first run: %q", got)
	}
	if got := ok(t, "next", "--config", cfg, "orders", "--store", store); !cmp.Equal(got, []string{"O13"}) {
		t.Errorf("second run: %q", got)
	}
	if _, err := os.Stat(store); err != nil {
		t.Error(err)
	}
}

// Progress goes to stderr only when it is a terminal.
func TestNoProgressOnPipes(t *testing.T) {
	r := runSN(t, "", nil, "next", "-t", "L@<seq>", "-n", "30000", "--store", filepath.Join(t.TempDir(), "sn.db"))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	got := lines(r.stdout)
	if len(got) != 30000 || got[0] != "L1" || got[29999] != "L30000" {
		t.Errorf("%d lines, from %s to %s", len(got), got[0], got[len(got)-1])
	}
}

// startLong starts a run of sn next that would take very long, and
// returns it with its stdout (buffered and raw) and stderr once it has
// printed a line. The run is killed when the test ends, should the test
// not have waited for it.
func startLong(t *testing.T, store string) (*exec.Cmd, *bufio.Reader, io.Closer, *bytes.Buffer, string) {
	t.Helper()
	cmd := snCommand(t, nil, "next", "-t", "I@<seq>", "-n", "1000000000", "--store", store)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	out := bufio.NewReader(stdout)
	first, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v; stderr: %s", err, stderr.String())
	}
	return cmd, out, stdout, &stderr, first
}

func TestInterrupt(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	cmd, out, _, stderr, first := startLong(t, store)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr: %s", code, stderr.String())
	}
	printed := lines(first + string(rest))
	for i, s := range printed {
		if s != "I"+strconv.Itoa(i+1) {
			t.Fatalf("line %d is %q, want I%d: the output must be whole lines, in order", i+1, s, i+1)
		}
	}
	if want := fmt.Sprintf("sn: interrupted after %d of 1000000000 numbers\n", len(printed)); stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	// The store was closed properly and the next run continues.
	next := ok(t, "next", "-t", "I@<seq>", "--store", store)
	if n, _ := strconv.Atoi(strings.TrimPrefix(next[0], "I")); n <= len(printed) {
		t.Errorf("after the interrupted run printed %d numbers, the next run gives %s", len(printed), next[0])
	}
}

func TestBrokenPipe(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sn.db")
	cmd, _, stdout, stderr, _ := startLong(t, store)
	// Like `sn next ... | head -1`: the reader goes away.
	stdout.Close()
	cmd.Wait()
	status := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if status.Signaled() || status.ExitStatus() != 141 {
		t.Errorf("wait status %v (exit %d), want exit 141 without dying of the signal", status, status.ExitStatus())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
	// The store was closed: it opens again at once.
	ok(t, "next", "-t", "I@<seq>", "--store", store, "--wait", "0")
}

// Without a ledger, Redis keeps the numbers alone: sn takes a Redis that
// fsyncs every write, and refuses another with what to do.
func TestRedisOnly(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	url := "redis://" + srv.Addr() + "/0"
	if got := ok(t, "next", "-t", "R@<seq>", "--redis", url, "-n", "3"); !cmp.Equal(got, []string{"R1", "R2", "R3"}) {
		t.Errorf("first run: %q", got)
	}
	if got := ok(t, "next", "-t", "R@<seq>", "--redis", url, "-n", "2"); !cmp.Equal(got, []string{"R4", "R5"}) {
		t.Errorf("second run: %q, want R4, R5", got)
	}
	ok(t, "floor", "-t", "R@<seq>", "--redis", url, "R40")
	if got := ok(t, "next", "-t", "R@<seq>", "--redis", url); !cmp.Equal(got, []string{"R41"}) {
		t.Errorf("after floor: %q, want R41", got)
	}

	srv.Stop(t)
	r := runSN(t, "", nil, "next", "-t", "R@<seq>", "--redis", url)
	if want := "sn: backend/redis: " + url + ": dial tcp " + srv.Addr() + ": connect: connection refused\n"; r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("Redis down: exit %d, stderr %s", r.code, r.stderr)
	}

	unsafe := "redis://" + redistest.Start(t).Addr() + "/0" // appendonly no
	cfg := writeConfig(t, t.TempDir(), "sn.yaml", "store: {backend: redis, url: \""+unsafe+"\"}\ntemplates:\n  orders: {template: \"R@<seq>\"}\n")
	for _, args := range [][]string{
		{"next", "-t", "R@<seq>", "--redis", unsafe},
		{"floor", "-t", "R@<seq>", "--redis", unsafe, "R5"},
		{"next", "--config", cfg, "orders"},
	} {
		r := runSN(t, "", nil, args...)
		how := "give sn a ledger, a database every machine shares, with --ledger postgres://... or mysql://..."
		if args[1] == "--config" {
			how = "give the template's sequence a ledger (ledger: postgres://... or mysql://...) in " + cfg
		}
		hint := "sn: without a ledger, Redis keeps the numbers alone and may lose some it handed out: " + how + ", or run Redis with appendonly yes and appendfsync always\n"
		if r.code != 1 || r.stdout != "" || !strings.HasSuffix(r.stderr, hint) || !strings.Contains(r.stderr, "appendonly no and appendfsync everysec") {
			t.Errorf("sn %q on an unsafe Redis: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and, last:\n%s", args, r.code, r.stdout, r.stderr, hint)
		}
	}
}

// On a single host, the strict counter may be refilled from a file.
func TestRedisStrictSingleHost(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr() + "/0"
	store := filepath.Join(t.TempDir(), "strict.db")
	for run, want := range [][]string{{"S1", "S2"}, {"S3", "S4"}} {
		if got := ok(t, "next", "-t", "S@<seq>", "--redis", url, "--strict", "--single-host", "--store", store, "-n", "2"); !cmp.Equal(got, want) {
			t.Errorf("strict run %d: %q, want %q", run, got, want)
		}
	}
	if _, err := os.Stat(store); err != nil {
		t.Errorf("the strict counter's store: %v", err)
	}
	// A config file must say single_host too.
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "sn.yaml", "store: {backend: redis-strict, url: \""+url+"\", path: strict.db}\ntemplates:\n  orders: {template: \"S@<seq>\"}\n")
	r := runSN(t, "", nil, "next", "--config", cfg, "orders")
	want := fmt.Sprintf(`sn: config: %s: line 3: template "orders": sequence.path: path "strict.db": a file is one machine's, and behind a Redis that several machines share it repeats numbers once Redis loses its data: `+
		`set ledger to a database every machine shares (postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379), or single_host: true if one host alone uses this Redis`+"\n", cfg)
	if r.code != 2 || r.stdout != "" || r.stderr != want {
		t.Errorf("no single_host: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", r.code, r.stdout, r.stderr, want)
	}
	cfg = writeConfig(t, dir, "sn.yaml", "store: {backend: redis-strict, url: \""+url+"\", path: strict.db, single_host: true}\ntemplates:\n  orders: {template: \"C@<seq>\"}\n")
	if got := ok(t, "next", "--config", cfg, "orders"); !cmp.Equal(got, []string{"C1"}) {
		t.Errorf("single_host: %q, want C1", got)
	}
}

// A Redis server that does not answer fails the run within the store's
// fetch_timeout, instead of the client's dial timeout times its retries.
func TestRedisNoAnswer(t *testing.T) {
	url := "redis://" + redistest.SilentServer(t) + "/0"
	cfg := writeConfig(t, t.TempDir(), "sn.yaml", "store: {backend: redis, url: \""+url+"\", fetch_timeout: 100ms}\ntemplates:\n  orders: {template: \"R@<seq>\"}\n")
	r := runSN(t, "", nil, "next", "--config", cfg, "orders")
	want := fmt.Sprintf("sn: config: template \"orders\": redis sequence: backend/redis: %s: no answer within 100ms: context deadline exceeded\n", url)
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

func TestParse(t *testing.T) {
	const unitTpl = `@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=5, key=unit>`
	r := runSN(t, "", nil, "parse", "-t", unitTpl, "010-6541-00012", "010-65x1-00012")
	want := []string{
		`010-6541-00012: counter "@<area>-@<unit>-@<seq, key=unit>|unit=6541" number 12; area="010" unit="6541"`,
		`010-65x1-00012: invalid text (template offset 36): want "-" at byte 6, found "x1-00012"`,
	}
	if r.code != 1 || r.stderr != "" {
		t.Errorf("exit %d (want 1), stderr %s", r.code, r.stderr)
	}
	if diff := cmp.Diff(want, lines(r.stdout)); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	// What next prints, parse reads back.
	store := filepath.Join(t.TempDir(), "sn.db")
	nums := ok(t, "next", "-t", luhnTpl, "--store", store, "-n", "3")
	got := ok(t, append([]string{"parse", "-t", luhnTpl}, nums...)...)
	for i, line := range got {
		if want := fmt.Sprintf(`%s: counter "SN-@<seq>-" number %d`, nums[i], i+1); line != want {
			t.Errorf("parse: %q, want %q", line, want)
		}
	}
}

func TestFloor(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "sn.db")
	daily := `INV-@<date, format=yyyyMMdd>-@<unit, chars=0-9>-@<seq, width=4, key=unit, reset=day>`
	// Numbers of an older system, one of them not from this template.
	old := "INV-20170304-7-0041\nINV-20170304-7-0007\nINV-20170304-8-0100\nINV-20170305-7-0003\n"

	r := runSN(t, old+"INV-2017034-7-0001\n", nil, "floor", "-t", daily, "--store", store)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "1 of 5 numbers do not fit the template; no counter was changed") {
		t.Errorf("a bad number: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("floor opened the store for numbers it refused (stat: %v)", err)
	}

	dry := runSN(t, old, nil, "floor", "-t", daily, "--store", store, "--dry-run")
	wantDry := []string{
		`counter "INV-@<date>-@<unit>-@<seq, key=unit, reset=day>|unit=7|2017-03-04": would be raised above 41 (the largest of 2 numbers)`,
		`counter "INV-@<date>-@<unit>-@<seq, key=unit, reset=day>|unit=8|2017-03-04": would be raised above 100 (the largest of 1 numbers)`,
		`counter "INV-@<date>-@<unit>-@<seq, key=unit, reset=day>|unit=7|2017-03-05": would be raised above 3 (the largest of 1 numbers)`,
	}
	if dry.code != 0 || dry.stderr != "" {
		t.Errorf("--dry-run: exit %d, stderr %s", dry.code, dry.stderr)
	}
	if diff := cmp.Diff(wantDry, lines(dry.stdout)); diff != "" {
		t.Errorf("--dry-run (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("--dry-run opened the store (stat: %v)", err)
	}

	r = runSN(t, old, nil, "floor", "-t", daily, "--store", store)
	if r.code != 0 || r.stderr != "" || len(lines(r.stdout)) != 3 {
		t.Fatalf("floor: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	next := func(unit, at string) string {
		got := ok(t, "next", "-t", daily, "--store", store, "--var", "unit="+unit, "--at", at)
		return got[0]
	}
	for _, c := range []struct{ unit, at, want string }{
		{"7", "2017-03-04", "INV-20170304-7-0042"},
		{"8", "2017-03-04", "INV-20170304-8-0101"},
		{"7", "2017-03-05", "INV-20170305-7-0004"},
		{"9", "2017-03-04", "INV-20170304-9-0001"},
	} {
		if got := next(c.unit, c.at); got != c.want {
			t.Errorf("next unit %s at %s = %q, want %q", c.unit, c.at, got, c.want)
		}
	}
	// A floor never lowers a counter.
	ok(t, "floor", "-t", daily, "--store", store, "INV-20170304-7-0001")
	if got := next("7", "2017-03-04"); got != "INV-20170304-7-0043" {
		t.Errorf("after a lower floor: %q", got)
	}
	// Memory keeps nothing: refused.
	cfg := writeConfig(t, dir, "mem.yaml", "store: {backend: memory}\ntemplates:\n  t: {template: \"T@<seq>\"}\n")
	if r := runSN(t, "", nil, "floor", "--config", cfg, "t", "T5"); r.code != 2 {
		t.Errorf("floor on memory: exit %d, stderr %s", r.code, r.stderr)
	}
}
