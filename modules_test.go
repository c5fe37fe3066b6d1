package sn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// heavy are the modules of the clients that an application importing only
// sn's core must not be made to require: the stores with heavy clients,
// Prometheus and the browser of the tests live in modules of their own.
var heavy = []string{
	"google.golang.org/grpc", "go.etcd.io/etcd/", "go.uber.org/zap", "google.golang.org/protobuf",
	"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "github.com/redis/go-redis",
	"github.com/prometheus/", "github.com/chromedp/", "modernc.org/",
}

// TestCoreModuleGraph builds the README's program as an application of
// its own, which requires sn and replaces it (and every module of this
// repository) with this checkout, and reads its module graph as its users'
// go command would.
func TestCoreModuleGraph(t *testing.T) {
	main := readmeProgram(t)

	t.Run("core", func(t *testing.T) {
		app := newApp(t, main, "")
		goCmd(t, app, "mod", "tidy")
		all := strings.Fields(goCmd(t, app, "list", "-m", "-f", "{{.Path}}", "all"))
		t.Logf("the README's program: %d modules in go list -m all", len(all))
		for _, m := range all {
			for _, h := range heavy {
				if strings.HasPrefix(m, h) {
					t.Errorf("the README's program requires %s", m)
				}
			}
		}
	})

	// An application that pinned grpc and client_golang keeps its
	// versions when it adds sn: minimal version selection reads no higher
	// ones in sn's go.mod.
	pins := "require (\n\tgoogle.golang.org/grpc v1.70.0\n\tgithub.com/prometheus/client_golang v1.20.0\n)\n"
	t.Run("pinned", func(t *testing.T) {
		app := newApp(t, main, pins)
		got := versions(t, app)
		if got["google.golang.org/grpc"] != "v1.70.0" || got["github.com/prometheus/client_golang"] != "v1.20.0" {
			t.Errorf("grpc %s, client_golang %s; want the pinned v1.70.0 and v1.20.0", got["google.golang.org/grpc"], got["github.com/prometheus/client_golang"])
		}
	})

	// The control: the same application adding the etcd backend, whose
	// client needs a later grpc, is moved to it; the check above sees a
	// move when there is one.
	t.Run("control", func(t *testing.T) {
		app := newApp(t, main, pins+"require github.com/sngen/sn/backend/etcd v0.0.0-00010101000000-000000000000\n")
		got := versions(t, app)
		if v := got["google.golang.org/grpc"]; v == "v1.70.0" || v == "" {
			t.Errorf("with backend/etcd required, grpc is %q: the check cannot see a move", v)
		}
		t.Logf("with backend/etcd required: grpc %s", got["google.golang.org/grpc"])
	})
}

// TestBoltConfigFootprint measures a program that reads one bolt store
// from a config file (examples/config, which imports config and
// backend/bolt): the packages it links besides the standard library, and
// its size.
func TestBoltConfigFootprint(t *testing.T) {
	root := repoRoot(t)
	var pkgs []string
	for _, p := range strings.Fields(goCmd(t, root, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./examples/config")) {
		pkgs = append(pkgs, p)
	}
	if len(pkgs) > 40 {
		t.Errorf("examples/config links %d packages besides the standard library, want at most 40:\n%s", len(pkgs), strings.Join(pkgs, "\n"))
	}
	bin := filepath.Join(t.TempDir(), "app")
	goCmd(t, root, "build", "-o", bin, "./examples/config")
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 12<<20 {
		t.Errorf("examples/config is %.1f MB, want under 12 MB", float64(fi.Size())/(1<<20))
	}
	t.Logf("examples/config: %d non-standard packages, %.1f MB", len(pkgs), float64(fi.Size())/(1<<20))
}

// readmeProgram returns the Go program of the README.
func readmeProgram(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(package main\n.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no Go program")
	}
	return string(m[1])
}

// newApp writes an application module that requires sn, with main as its
// program and more as more of its go.mod, and replaces every module of
// this repository (go.work lists them) with this checkout.
func newApp(t *testing.T, main, more string) string {
	root := repoRoot(t)
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/shop\n\ngo 1.26.0\n\nrequire github.com/sngen/sn v0.0.0-00010101000000-000000000000\n\n" + more
	for _, dir := range regexp.MustCompile(`(?m)^\s+(\./[^\s]*|\.)\s*$`).FindAllStringSubmatch(string(work), -1) {
		mod, err := os.ReadFile(filepath.Join(root, dir[1], "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		path := regexp.MustCompile(`(?m)^module (\S+)`).FindSubmatch(mod)
		gomod += "replace " + string(path[1]) + " => " + filepath.Join(root, dir[1]) + "\n"
	}
	app := t.TempDir()
	for name, text := range map[string]string{"go.mod": gomod, "main.go": main} {
		if err := os.WriteFile(filepath.Join(app, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// versions returns the version of each module in app's module graph.
func versions(t *testing.T, app string) map[string]string {
	v := map[string]string{}
	for _, line := range strings.Split(goCmd(t, app, "list", "-mod=mod", "-m", "-f", "{{.Path}} {{.Version}}", "all"), "\n") {
		if path, version, ok := strings.Cut(line, " "); ok {
			v[path] = version
		}
	}
	return v
}

// goCmd runs the go command in dir, outside the workspace, and returns
// its output.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// repoRoot returns the root of this repository: the directory of this
// test.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestAPICheck runs .ci/apicheck, which make test runs on every module,
// on a repository of one small module: a compatible change passes, an
// incompatible one fails unless the changelog declares it before v1, and
// fails whatever the changelog says after v1.
func TestAPICheck(t *testing.T) {
	script := filepath.Join(repoRoot(t), ".ci", "apicheck")
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=sn", "-c", "user.email=sn@example.com", "-c", "tag.gpgSign=false", "-c", "commit.gpgSign=false"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func() (string, bool) {
		t.Helper()
		cmd := exec.Command(script, ".")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			t.Fatal(err)
		}
		return string(out), err == nil
	}
	git("init", "-q")
	write("go.mod", "module example.com/m\n\ngo 1.26.0\n")
	write("m.go", "package m\n\n// F is.\nfunc F(a int) int { return a }\n")
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n### Added\n\n- G.\n\n## v0.1.0\n\n### Breaking\n\n- an old break.\n")
	git("add", ".")
	git("commit", "-qm", "v0.1.0")
	if out, ok := check(); !ok || !strings.Contains(out, "no tag v[0-9]* yet") {
		t.Fatalf("without a tag: ok %v\n%s", ok, out)
	}
	git("tag", "v0.1.0")

	write("m.go", "package m\n\n// F is.\nfunc F(a int) int { return a }\n\n// G is.\nfunc G() {}\n")
	if out, ok := check(); !ok || !strings.Contains(out, "compatible with v0.1.0") {
		t.Errorf("an added function: ok %v\n%s", ok, out)
	}
	write("m.go", "package m\n\n// F is.\nfunc F(a string) string { return a }\n")
	if out, ok := check(); ok || !strings.Contains(out, "F: changed from func(int) int to func(string) string") {
		t.Errorf("a changed signature, no Breaking under Unreleased (only under v0.1.0): ok %v\n%s", ok, out)
	}
	write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n### Breaking\n\n- F takes a string.\n")
	if out, ok := check(); !ok || !strings.Contains(out, "as CHANGELOG.md's Unreleased Breaking says") {
		t.Errorf("a changed signature, declared: ok %v\n%s", ok, out)
	}
	git("commit", "-qam", "v1")
	git("tag", "v1.0.0")
	write("m.go", "package m\n")
	if out, ok := check(); ok || !strings.Contains(out, "a v1 module keeps its API") {
		t.Errorf("a removed function after v1, Breaking in the changelog: ok %v\n%s", ok, out)
	}
}
