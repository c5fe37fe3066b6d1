package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn/client"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// serveLimited serves the Set of start with HTTPServer on a listener from
// Limit, and returns its address.
func serveLimited(t *testing.T, lim server.Limits) string {
	t.Helper()
	ts, set := start(t, server.Options{Tokens: []string{testToken}})
	ts.Close()
	h, err := server.New(set, server.Options{Tokens: []string{testToken}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.HTTPServer(h)
	go srv.Serve(server.Limit(ln, srv, lim))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// Clients that do not authenticate hold connections: 600 idle ones, and
// 100 that send a header slowly and without end. The server keeps at most
// 256 connections, taking the place of the idlest for each new one, so an
// authenticated client still gets its numbers; the slow headers are cut at
// 16 KiB with a 431 in JSON, and the server's memory stays small.
func TestIdleAndSlowClients(t *testing.T) {
	addr := serveLimited(t, server.Limits{MaxConns: 256, MaxConnsPerClient: 256})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 600 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	stop := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /v1/templates HTTP/1.1\r\nHost: 127.0.0.1\r\n")
			pad := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
			for range 1100 { // 1.1 MB, a line every few ms
				select {
				case <-stop:
					return
				default:
				}
				if _, err := io.WriteString(c, pad); err != nil {
					break
				}
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				answers["no answer"]++
				return
			}
			var e wire.ErrorResponse
			json.NewDecoder(resp.Body).Decode(&e)
			answers[fmt.Sprintf("%d %s", resp.StatusCode, e.Error.Code)]++
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.New("http://"+addr, client.Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := c.Generator("orders").Next(ctx); err != nil {
			t.Fatalf("an authenticated request %d among the idle and slow clients: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("answers to the slow headers: %v", answers)
	for a, n := range answers {
		if a != "431 too_large" && a != "no answer" {
			t.Errorf("%d slow headers answered %s; want 431 too_large in JSON, or the connection closed for another", n, a)
		}
	}
	// The server closed the idle connections it let go: of the 600, at
	// least the 444 over the limit.
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 600-256 {
		t.Errorf("%d of 600 idle connections closed by a server that keeps 256", closed)
	}
	t.Logf("%d of 600 idle connections closed", closed)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 256<<20 {
		t.Errorf("%d MB of heap in use with 700 hostile connections", ms.HeapInuse>>20)
	}
}

// A request net/http cannot read is answered 400 in JSON, as every other
// error is.
func TestMalformedRequestIsJSON(t *testing.T) {
	addr := serveLimited(t, server.Limits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/templates HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") // two Hosts: net/http answers 400 itself
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var e wire.ErrorResponse
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != 400 || e.Error.Code != wire.CodeBadRequest || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a malformed request: %d %s %+v (%v)", resp.StatusCode, resp.Header.Get("Content-Type"), e, err)
	}
}

// A client that announces a long body and sends it a byte at a time gets
// its answer at once, and its connection closed, whatever the route: the
// server never waits for a body it does not read (found by an adversary:
// 5 addresses x 260 such connections held every slot for 30 s each).
func TestSlowBodyClosed(t *testing.T) {
	addr := serveLimited(t, server.Limits{})
	for _, path := range []string{"/healthz", "/v1/templates/orders/next", "/nope"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{", path)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("POST %s with a slow body: no answer: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("POST %s with a slow body: %d, connection not closed after the answer (%v)", path, resp.StatusCode, err)
		}
		c.Close()
	}
}
