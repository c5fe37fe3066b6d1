package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/internal/pgtest"
	"github.com/sngen/sn/internal/redistest"
)

// The ordinary mistakes and routine actions that printed numbers twice or
// stopped a series, each done with the built sn against real servers;
// numbers are counted for repeats. (Case 4, a Generator with no sequence
// given, is a Go program's: TestNewErrors refuses it at New. Case 3 with
// a replica promoted while it lagged is TestMachinesFailover.)
func TestOrdinaryMistakes(t *testing.T) {
	t.Run("1 two spellings of one series", func(t *testing.T) {
		env := []string{"XDG_STATE_HOME=" + t.TempDir()} // the default store
		seen := map[string]bool{}
		first := runSN(t, "", env, "next", "-t", readmeTpl, "-n", "5")
		second := runSN(t, "", env, "next", "-t", luhnTpl, "-n", "5")
		if first.code != 0 || second.code == 0 || !strings.Contains(second.stderr, "collides with") {
			t.Fatalf("README's template: exit %d; sn help's after it: exit %d, %s", first.code, second.code, second.stderr)
		}
		if n := countRepeats(seen, lines(first.stdout), lines(second.stdout)); n != 0 {
			t.Errorf("%d repeats", n)
		}
	})
	t.Run("2 a template edited in place", func(t *testing.T) {
		env := []string{"XDG_STATE_HOME=" + t.TempDir()}
		a := runSN(t, "", env, "next", "-t", "@<date, format=yyyyMMdd>@<seq, width=4>", "--at", "2012-03-04")
		b := runSN(t, "", env, "next", "-t", "@<date, format=yyMMdd, window=2000>@<seq, width=6>", "--at", "2020-12-03")
		if a.code != 0 || b.code == 0 || !strings.Contains(b.stderr, "collides with") {
			t.Fatalf("exit %d, then %d: %s", a.code, b.code, b.stderr)
		}
	})
	for _, persist := range []string{"snapshot", "aof everysec"} {
		t.Run("3 Redis over a ledger comes back with older ranges: "+persist, func(t *testing.T) {
			args := []string{"--save", "3600 1 300 100 60 10000"} // Redis's own default
			if persist != "snapshot" {
				args = []string{"--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "no"}
			}
			srv := redistest.Start(t, redistest.Args(args...))
			ledger := pgtest.Shared(t).NewDatabase(t)
			run := func(n int) []string {
				return ok(t, "next", "-t", "R-@<seq, width=8>", "--redis", "redis://"+srv.Addr(), "--ledger", ledger, "-n", fmt.Sprint(n))
			}
			seen := map[string]bool{}
			got := [][]string{run(2)}
			rdb := srv.Client(t)
			var size int64
			if persist == "snapshot" {
				if err := rdb.Save(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				rdb.ConfigSet(context.Background(), "appendfsync", "always")
				got = append(got, run(1))
				rdb.ConfigSet(context.Background(), "appendfsync", "everysec")
				size = fileSize(t, srv.AOF(t))
			}
			got = append(got, run(5))
			srv.Kill(t)
			if persist != "snapshot" {
				if err := os.Truncate(srv.AOF(t), size); err != nil { // the last second, not fsynced
					t.Fatal(err)
				}
			}
			srv.Restart(t)
			got = append(got, run(5), run(5))
			if n := countRepeats(seen, got...); n != 0 {
				t.Errorf("%d repeats in %v", n, got)
			}
		})
	}
	t.Run("5 two machines, two default stores", func(t *testing.T) {
		// Not detectable: each run says, once, that it made a store of its
		// machine's and that a shared one is needed.
		for _, machine := range []string{t.TempDir(), t.TempDir()} {
			r := runSN(t, "", []string{"XDG_STATE_HOME=" + machine}, "next", "-t", "INV-@<seq, width=6>")
			if r.code != 0 || !strings.Contains(r.stderr, "a series issued on several machines needs one shared store") {
				t.Errorf("exit %d, stderr %q", r.code, r.stderr)
			}
		}
	})
	t.Run("6 a restart of a narrow series", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, "sn.yaml", `store: {backend: bolt, path: sn.db}
templates:
  daily: {template: "D@<date, format=yyyyMMdd>-@<seq, width=6, reset=day>"}
`)
		seen := map[string]bool{}
		var last string
		for run := range 3 {
			s := startServe(t, nil, "--config", cfg)
			for i := range 4 {
				nums, err := issue(http.DefaultClient, s.url, "daily", 50_000)
				if err != nil {
					t.Fatalf("run %d, request %d: %v", run, i, err)
				}
				if run > 0 && i == 0 && nums[0] != next6(last) {
					t.Errorf("after a restart the series went on at %s, after %s: a gap", nums[0], last)
				}
				last = nums[len(nums)-1]
				if n := countRepeats(seen, nums); n != 0 {
					t.Fatalf("run %d: %d repeats", run, n)
				}
			}
			s.cmd.Process.Signal(syscall.SIGTERM)
			<-s.done
		}
		if len(seen) != 600_000 {
			t.Errorf("%d numbers", len(seen))
		}
	})
	t.Run("7 a post-dated document in an hourly series", func(t *testing.T) {
		dir := t.TempDir()
		cfg := writeConfig(t, dir, "sn.yaml", `store: {backend: bolt, path: sn.db}
templates:
  hourly: {template: "H@<date, format=yyyyMMddHH>-@<seq, width=4, reset=hour>"}
`)
		s := startServe(t, nil, "--config", cfg)
		tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.RFC3339)
		if code, body := post(t, s.url+"/v1/templates/hourly/next", `{"at": "`+tomorrow+`"}`); code != 200 {
			t.Fatalf("a post-dated document: %d %s", code, body)
		}
		for range 3 {
			if code, body := post(t, s.url+"/v1/templates/hourly/next", `{}`); code != 200 {
				t.Fatalf("now, after a post-dated document: %d %s", code, body)
			}
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
		s = startServe(t, nil, "--config", cfg)
		if code, body := post(t, s.url+"/v1/templates/hourly/next", `{}`); code != 200 {
			t.Fatalf("now, after a restart: %d %s", code, body)
		}
	})
}

// countRepeats adds the numbers of each list to seen and counts those
// that were there.
func countRepeats(seen map[string]bool, lists ...[]string) int {
	n := 0
	for _, l := range lists {
		for _, s := range l {
			if seen[s] {
				n++
			}
			seen[s] = true
		}
	}
	return n
}

// next6 returns the number after D...-NNNNNN.
func next6(s string) string {
	i := strings.LastIndexByte(s, '-')
	var n int
	fmt.Sscanf(s[i+1:], "%d", &n)
	return fmt.Sprintf("%s%06d", s[:i+1], n+1)
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// fileSize returns the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
