package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// block is a fenced code block of a Markdown file.
type block struct {
	file string
	line int    // of the opening fence
	lang string // the fence's info string
	text string
}

// blocks returns the fenced code blocks of the Markdown file at path.
func blocks(t *testing.T, path string) []block {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	var indent string
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			indent = line[:len(line)-len(trimmed)]
			cur = &block{file: path, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		case cur != nil && strings.HasPrefix(trimmed, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block that does not end", path, cur.line)
	}
	return out
}

// Every code block of the README and of docs/ runs in this test, so that
// what a newcomer copies works:
//
//   - go: a whole program (package main) is run with this module, and what
//     it prints compared with its "// Output:" comment; a fragment must
//     appear, line for line (indentation aside), in a Go file of the
//     repository that runs in a test (an Example, a test, an example
//     program), which keeps it compiling and running.
//   - sh: run by bash in an empty directory, with the built sn first on
//     PATH ("go run ./cmd/sn" is that sn); "make test" is checked to be a
//     target of the Makefile instead of run: it is what CI runs.
//   - yaml: parsed as a config file, and validated when it has templates
//     (its serve section by package server).
//
// A block in another language (text, json) is not code.
func TestDocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, docs...)
	if len(docs) == 0 {
		t.Fatal("no docs/*.md: the test no longer finds them")
	}
	corpus := goCorpus(t, root)
	counts := map[string]int{}
	for _, f := range files {
		for _, b := range blocks(t, f) {
			name := strings.TrimPrefix(b.file, root+"/") + ":" + strconv.Itoa(b.line)
			counts[b.lang]++
			t.Run(name, func(t *testing.T) {
				switch b.lang {
				case "go":
					if strings.HasPrefix(b.text, "package main") {
						runProgram(t, root, b)
					} else if !inCorpus(corpus, b.text) {
						t.Errorf("%s: a Go fragment that no test or Example of the repository holds, line for line:\n%s", name, b.text)
					}
				case "sh":
					runShell(t, root, b)
				case "yaml":
					c, err := config.Decode([]byte(b.text), "yaml")
					if err == nil && len(c.Templates) > 0 {
						err = c.Validate()
					}
					if err == nil && c.Serve != nil {
						_, err = server.SettingsOf(c)
					}
					if err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			})
		}
	}
	if counts["go"] == 0 || counts["sh"] == 0 {
		t.Fatalf("blocks found by language: %v; the test no longer reads the docs as it should", counts)
	}
	t.Logf("code blocks by language: %v", counts)
}

// goCorpus returns the lines, trimmed and without blank ones, of the Go
// files of the repository that run in tests: test files and example
// programs. Directories whose name starts with "." (.git, the programs
// runProgram writes) are not read.
func goCorpus(t *testing.T, root string) [][]string {
	var corpus [][]string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			switch rel := strings.TrimPrefix(path, root+"/"); {
			case strings.HasPrefix(e.Name(), "."):
			case e.IsDir():
				walk(path)
			case strings.HasSuffix(path, "_test.go") || strings.HasPrefix(rel, "examples/") && strings.HasSuffix(path, ".go"):
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				corpus = append(corpus, normalize(string(data)))
			}
		}
	}
	walk(root)
	return corpus
}

// normalize returns text's lines, trimmed, with their runs of spaces and
// tabs made one space (gofmt aligns comments), without blank ones.
func normalize(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// inCorpus reports whether the lines of fragment appear in a file of
// corpus, one after another.
func inCorpus(corpus [][]string, fragment string) bool {
	want := normalize(fragment)
	for _, lines := range corpus {
		for i := range lines {
			if len(lines)-i >= len(want) && slices.Equal(lines[i:i+len(want)], want) {
				return true
			}
		}
	}
	return false
}

// outputComment matches a program's expected output.
var outputComment = regexp.MustCompile(`(?s)\n\s*// Output:\n(.*?)\n}\s*$`)

// runProgram runs the Go program of b with this module, and compares what
// it prints with its Output comment.
func runProgram(t *testing.T, root string, b block) {
	dir, err := os.MkdirTemp(root, ".doctest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./"+filepath.Base(dir))
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s:%d: go run: %v\n%s%s", b.file, b.line, err, out, stderr)
	}
	if m := outputComment.FindStringSubmatch(b.text); m != nil {
		var want []string
		for _, l := range strings.Split(m[1], "\n") {
			want = append(want, strings.TrimPrefix(strings.TrimSpace(l), "// "))
		}
		if got := strings.TrimRight(string(out), "\n"); got != strings.Join(want, "\n") {
			t.Errorf("%s:%d: the program printed\n%s\nwant\n%s", b.file, b.line, got, strings.Join(want, "\n"))
		}
	}
}

// runShell runs the commands of b with bash, sn first on PATH.
// loopbackPort matches an address on the loopback interface with a port.
var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]{2,5}`)

func runShell(t *testing.T, root string, b block) {
	var script strings.Builder
	script.WriteString("set -e -o pipefail\n")
	sc := bufio.NewScanner(strings.NewReader(b.text))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "make test" {
			mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
			if err != nil || !regexp.MustCompile(`(?m)^test:`).Match(mk) {
				t.Errorf("%s:%d: make test, and the Makefile has no target test (%v)", b.file, b.line, err)
			}
			continue
		}
		script.WriteString(strings.Replace(line, "go run ./cmd/sn ", "sn ", 1) + "\n")
	}
	script.WriteString("wait || true\n") // for what the block started in the background, and killed
	// The ports the docs show (127.0.0.1:18080) are free ones of this run,
	// each the same through the block: two suites on one machine must not
	// meet on them.
	ports := map[string]string{}
	text := loopbackPort.ReplaceAllStringFunc(script.String(), func(addr string) string {
		if _, ok := ports[addr]; !ok {
			ports[addr] = freePort(t)
		}
		return ports[addr]
	})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", text)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(snBin)+":"+os.Getenv("PATH"), "HOME="+dir, "XDG_STATE_HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d: %v\n%s", b.file, b.line, err, out)
	}
	t.Logf("%s:%d:\n%s", b.file, b.line, out)
}
