package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence/boltseq"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// cutter is a TCP proxy that cuts connections at random while requests
// are in flight: before the request reaches the server, or after the
// server answered and before the answer reaches the client.
type cutter struct {
	ln       net.Listener
	upstream string
	p        float64
	cuts     atomic.Int64
	conns    atomic.Int64
}

func newCutter(t *testing.T, upstream string, p float64) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, upstream: upstream, p: p}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go c.serve(down)
		}
	}()
	return c
}

func (c *cutter) serve(down net.Conn) {
	defer down.Close()
	up, err := net.Dial("tcp", c.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := down.Read(buf)
			if n > 0 {
				if rand.Float64() < c.p/3 { // cut before the server sees it
					c.cuts.Add(1)
					down.Close()
					up.Close()
					return
				}
				up.Write(buf[:n])
			}
			if err != nil {
				up.Close()
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			if rand.Float64() < c.p { // the server answered: the answer is lost
				c.cuts.Add(1)
				return
			}
			down.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// issueWithoutKey asks for n numbers with a plain POST, without an
// Idempotency-Key: what a caller that retries on its own sends.
func issueWithoutKey(addr string, n int) ([]string, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/templates/orders/next", strings.NewReader(fmt.Sprintf(`{"n": %d}`, n)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out wire.NextResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || len(out.Numbers) != n {
		return nil, fmt.Errorf("status %d, %d numbers", resp.StatusCode, len(out.Numbers))
	}
	return out.Numbers, nil
}

// TestRetriesCutConnections: 16 clients make 40 logical calls each
// through a proxy that cuts a third of the connections, before the
// request or after the answer; the client retries with the call's
// Idempotency-Key. Every logical call ends with one set of numbers, none
// issued twice, and every number the journal says was issued reached a
// caller. The control retries without a key (plain POSTs), as a caller that calls
// again would: numbers are issued that no caller ever sees.
func TestRetriesCutConnections(t *testing.T) {
	for _, control := range []bool{false, true} {
		name := "idempotent"
		if control {
			name = "control"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, err := config.Decode([]byte(`
store: {backend: bolt, path: sn.db}
templates:
  orders: {template: "SN-@<seq, width=8>"}
`), "yaml")
			if err != nil {
				t.Fatal(err)
			}
			set, err := cfg.Build(t.Context(), config.WithDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			h, err := server.New(set, server.Options{Tokens: []string{token}})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			cut := newCutter(t, ts.Listener.Addr().String(), 0.3)
			retries := 30
			if control {
				retries = -1
			}
			c, err := client.New("http://"+cut.ln.Addr().String(), client.Options{Token: token, Retries: retries,
				HTTPClient: &http.Client{Timeout: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			orders := c.Generator("orders")
			var mu sync.Mutex
			seen := map[string]int{} // number -> the logical call that got it
			var calls, dup, failed int
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() {
					for i := range 40 {
						call := w*1000 + i
						n := 1 + rand.IntN(5)
						var nums []string
						var err error
						for try := 0; try < 31; try++ {
							if control {
								nums, err = issueWithoutKey(cut.ln.Addr().String(), n)
							} else {
								nums, err = orders.Issue(context.Background(), client.Request{N: n})
							}
							if err == nil || !control {
								break
							}
						}
						mu.Lock()
						calls++
						if err != nil {
							failed++
							t.Errorf("call %d: %v", call, err)
						}
						for _, s := range nums {
							if _, ok := seen[s]; ok {
								dup++
							}
							seen[s] = call
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			ts.Close()
			if err := set.Close(); err != nil {
				t.Fatal(err)
			}
			// What the journal says was issued, and what reached a caller.
			store, err := boltseq.Open(filepath.Join(dir, "sn.db"), boltseq.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			keys, err := store.Keys(t.Context())
			if err != nil || len(keys) == 0 {
				t.Fatalf("keys: %v %v", keys, err)
			}
			var key string
			for _, k := range keys {
				if h, _ := journal.Of(store).Head(t.Context(), k.Key); h.Seq > 0 {
					key = k.Key
				}
			}
			events, head, err := journal.ReadJournal(t.Context(), journal.Of(store), key)
			if err != nil {
				t.Fatal(err)
			}
			if err := journal.VerifyChain(key, events, head); err != nil {
				t.Fatal(err)
			}
			rep := journal.Audit(key, events, head, time.Now())
			var issued, lost int64
			for _, sp := range rep.Spans {
				if sp.State != journal.Issued {
					continue
				}
				for v := sp.Range.First; v <= sp.Range.Last; v++ {
					issued++
					if _, ok := seen[fmt.Sprintf("SN-%08d", v)]; !ok {
						lost++
					}
				}
			}
			t.Logf("%s: %d logical calls, %d failed, %d connections, %d cut; %d numbers delivered, %d issued, %d issued and never delivered, %d delivered twice; journal explained: %v",
				name, calls, failed, cut.conns.Load(), cut.cuts.Load(), len(seen), issued, lost, dup, rep.Explained())
			if !rep.Explained() {
				t.Errorf("the journal does not explain every number: %v", rep.Problems)
			}
			if dup != 0 {
				t.Errorf("%d numbers delivered twice", dup)
			}
			if cut.cuts.Load() == 0 {
				t.Fatal("the proxy cut nothing: the test proves nothing")
			}
			switch {
			case !control && lost != 0:
				t.Errorf("%d numbers issued and never delivered, with idempotency keys", lost)
			case control && lost == 0:
				t.Errorf("the control lost no number: the test cannot see a call issued twice")
			}
		})
	}
}
