package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
)

// bareEnv makes the test binary the bare HTTP service of BenchmarkServeWrk
// (see TestMain): on the address in it, a net/http handler that reads the
// body and answers, as JSON, the bytes of the file SN_BARE_ONE, or of
// SN_BARE_MANY when the body asks for many numbers: what sn serve answers,
// without the work of issuing them. It is the physical limit of an HTTP
// service on this machine.
const bareEnv = "SN_BARE_LISTEN"

func bareServer() int {
	one, err1 := os.ReadFile(os.Getenv("SN_BARE_ONE"))
	many, err2 := os.ReadFile(os.Getenv("SN_BARE_MANY"))
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, err1, err2)
		return 1
	}
	ln, err := net.Listen("tcp", os.Getenv(bareEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "listening")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer := one
		if bytes.Contains(body, []byte("1000")) {
			answer = many
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.Write(answer)
	})
	http.Serve(ln, h)
	return 0
}

var wrkRate = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
var wrkBytes = regexp.MustCompile(`Transfer/sec:\s+([0-9.]+)([KMG]?B)`)

// BenchmarkServeWrk drives sn serve (a bbolt store, a scoped token, its
// metrics) and the bare handler above with wrk, an outside load
// generator, on 127.0.0.1, in interleaved rounds: POST next for one
// number and for 1,000. It prints requests/s and bytes/s of each, and sn
// serve's against the bare handler's. b.N is not used:
//
//	go test -run '^$' -bench ServeWrk -benchtime 1x ./cmd/sn
//
// It needs wrk (apt-get install wrk); make bench installs it.
func BenchmarkServeWrk(b *testing.B) {
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Fatal("wrk is not installed: apt-get install wrk (make bench does)")
	}
	dir := b.TempDir()
	cfg := filepath.Join(dir, "sn.yaml")
	const token = "wrk-bench-0123456789abcdef"
	os.WriteFile(filepath.Join(dir, "tokens"), []byte("app="+token+"\n"), 0o600)
	os.WriteFile(cfg, []byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=10>-@<checksum, algo=luhn>"}
serve:
  tokens_file: tokens
  tokens: [{id: app, actions: [issue]}]
`), 0o600)
	snURL := startServeB(b, cfg)
	// The answers sn serve gives, for the bare handler to give.
	answer := func(n int) string {
		req, _ := http.NewRequest("POST", snURL+"/v1/templates/orders/next", strings.NewReader(fmt.Sprintf(`{"n": %d}`, n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		path := filepath.Join(dir, fmt.Sprintf("answer%d", n))
		os.WriteFile(path, body, 0o600)
		return path
	}
	one, many := answer(1), answer(1000)
	bare := freePort(b)
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), bareEnv+"="+bare, "SN_BARE_ONE="+one, "SN_BARE_MANY="+many)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	bufio.NewReader(stderr).ReadString('\n')

	script := func(n int) string {
		path := filepath.Join(dir, fmt.Sprintf("post%d.lua", n))
		os.WriteFile(path, []byte(fmt.Sprintf(`wrk.method = "POST"
wrk.body = '{"n": %d}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
`, n, token)), 0o600)
		return path
	}
	type contender struct{ name, url, script string }
	cs := []contender{
		{"sn serve, 1 number", snURL, script(1)}, {"bare handler, 1 number", "http://" + bare, script(1)},
		{"sn serve, 1,000 numbers", snURL, script(1000)}, {"bare handler, 1,000 numbers", "http://" + bare, script(1000)},
	}
	rates := make([][]float64, len(cs))
	bytesPS := make([][]float64, len(cs))
	rounds := 5
	for range rounds {
		for i, c := range cs {
			out, err := exec.Command("wrk", "-t1", "-c32", "-d3s", "-s", c.script, c.url+"/v1/templates/orders/next").CombinedOutput()
			if err != nil {
				b.Fatalf("wrk: %v\n%s", err, out)
			}
			if bytes.Contains(out, []byte("Non-2xx")) {
				b.Fatalf("%s: answers that are not 200:\n%s", c.name, out)
			}
			m := wrkRate.FindSubmatch(out)
			t := wrkBytes.FindSubmatch(out)
			if m == nil || t == nil {
				b.Fatalf("wrk's output:\n%s", out)
			}
			r, _ := strconv.ParseFloat(string(m[1]), 64)
			v, _ := strconv.ParseFloat(string(t[1]), 64)
			v *= map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[string(t[2])]
			rates[i] = append(rates[i], r)
			bytesPS[i] = append(bytesPS[i], v)
		}
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\trequests/s\tMB/s\tbare / sn serve\t")
	for i, c := range cs {
		ratio := ""
		if i%2 == 1 {
			ratio = fmt.Sprintf("%.2fx requests/s, %.2fx bytes/s", med(rates[i])/med(rates[i-1]), med(bytesPS[i])/med(bytesPS[i-1]))
		}
		fmt.Fprintf(w, "%s\t%.0f\t%.1f\t%s\t\n", c.name, med(rates[i]), med(bytesPS[i])/(1<<20), ratio)
	}
	w.Flush()
	fmt.Printf("wrk -t1 -c32 -d3s, medians of %d rounds, contenders interleaved, on 127.0.0.1\n", rounds)
}
