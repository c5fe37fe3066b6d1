package remote_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sngen/sn"
	_ "github.com/sngen/sn/backend/bolt"
	"github.com/sngen/sn/client"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/remote"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

const token = "remote-test-token-0123456789abcdef"

// serve serves the templates of yaml on a bbolt file, with a token that
// may issue and read every template of no tenant, and one that may read
// only.
func serve(t *testing.T, yaml string) (*httptest.Server, *config.Set) {
	t.Helper()
	cfg, err := config.Decode([]byte(yaml), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.Build(t.Context(), config.WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(set, server.Options{Scoped: []server.Token{
		{ID: "app", Secret: token, Actions: []server.Action{server.Issue, server.Read}},
		{ID: "reader", Secret: "reader-" + token, Actions: []server.Action{server.Read}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); set.Close() })
	return ts, set
}

const templates = `
store: {backend: bolt, path: sn.db, step: 50}
templates:
  orders:  {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
  daily:   {template: "D@<date, format=yyyyMMdd>@<seq, width=5, reset=day>"}
  area:    {template: "@<area, chars=0-9, maxlen=3>-@<seq, width=5, key=area>"}
  secret:  {template: "S@<seq, width=10, obfuscate=k>"}
  hourly:  {template: "H@<date, format=yyyyMMddHH>@<seq, width=4, reset=hour>"}
obfuscation:
  k: {env: SN_REMOTE_TEST_KEY}
`

func newClient(t *testing.T, ts *httptest.Server, tok string) *client.Client {
	t.Helper()
	c, err := client.New(ts.URL, client.Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Numbers printed here from blocks, by two remote Generators and the
// service itself at once, never repeat; the service reads each back as
// one of its own, with the counter key and number it was drawn from.
func TestRemote(t *testing.T) {
	t.Setenv("SN_REMOTE_TEST_KEY", "0123456789abcdef0123")
	ts, set := serve(t, templates)
	c := newClient(t, ts, token)
	local, _ := set.Get("orders")
	for _, name := range []string{"orders", "daily", "area"} {
		t.Run(name, func(t *testing.T) {
			var gens []*remote.Generator
			for range 2 {
				g, err := remote.New(t.Context(), c, name, remote.Options{Segment: sequence.SegmentOptions{Step: 7, MaxStep: 40}})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				gens = append(gens, g)
			}
			served, _ := set.Get(name)
			var mu sync.Mutex
			seen := map[string]int{}
			var wg sync.WaitGroup
			issue := func(next func() ([]string, error)) {
				defer wg.Done()
				for range 60 {
					nums, err := next()
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, n := range nums {
						seen[n]++
					}
					mu.Unlock()
				}
			}
			req := sn.Request{N: 3, Vars: map[string]string{"area": "010"}}
			for _, g := range gens {
				for range 3 {
					wg.Add(1)
					go issue(func() ([]string, error) { return g.Issue(t.Context(), req) })
				}
			}
			wg.Add(1)
			go issue(func() ([]string, error) { return served.Issue(t.Context(), req) })
			wg.Wait()
			repeats := 0
			for n, k := range seen {
				if k > 1 {
					repeats++
					t.Errorf("%s printed %d times", n, k)
				}
				if _, err := served.Parse(n); err != nil {
					t.Errorf("the service does not read %s back: %v", n, err)
				}
			}
			if len(seen) != 7*60*3 {
				t.Errorf("%d numbers, want %d", len(seen), 7*60*3)
			}
			t.Logf("%s: %d numbers, repeats: %d", name, len(seen), repeats)
		})
	}
	_ = local
}

// What the service refuses, each with its reason: a template whose
// numbers only it prints, a token that may not issue, and (asked for
// directly) a block for another template's text, another engine, a clock
// off, a key of another template, a block too large.
func TestRemoteRefusals(t *testing.T) {
	t.Setenv("SN_REMOTE_TEST_KEY", "0123456789abcdef0123")
	ts, _ := serve(t, templates)
	c := newClient(t, ts, token)
	for name, want := range map[string]string{
		"secret": "obfuscate=k: its key stays with the service",
		"hourly": "reset=hour: its counters expire by the store's clock",
	} {
		_, err := remote.New(t.Context(), c, name, remote.Options{})
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s): %v; want it to say %s", name, err, want)
		}
	}
	_, err := remote.New(t.Context(), newClient(t, ts, "reader-"+token), "orders", remote.Options{})
	if !errors.Is(err, remote.ErrForbidden) || !strings.Contains(err.Error(), "the token's scope is read") {
		t.Errorf("a remote Generator with a read-only token: %v; want ErrForbidden", err)
	}

	var ce *client.Error
	orders := c.Generator("orders")
	info, err := orders.Explain(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	g, err := sn.New(info.Template, sn.WithSequence("seq", sequence.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	key, err := g.Key(sn.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		blocks   *client.Blocks
		key      string
		n        int64
		code     wire.Code
		contains string
	}{
		{"another text", orders.Blocks("SN-@<seq, width=9>-@<checksum, algo=luhn>", sn.Engine()), key, 10, wire.CodeMismatch, "fetch it again"},
		{"another engine", orders.Blocks(info.Template, "sn-engine-000000000000000000000000"), key, 10, wire.CodeMismatch, "build the client with the server's version of sn"},
		{"another template's key", orders.Blocks(info.Template, sn.Engine()), "M-@<seq>-", 10, wire.CodeInvalid, "not a key of this template"},
		{"a key of another shape", orders.Blocks(info.Template, sn.Engine()), "D@<date>@<seq>|2026-11-26", 10, wire.CodeInvalid, "2 components; the template's keys have 1"},
		{"a block too large", orders.Blocks(info.Template, sn.Engine()), key, info.MaxBlock + 1, wire.CodeBadRequest, "want a block of 1 to"},
	} {
		_, err := tc.blocks.Allocate(t.Context(), tc.key, tc.n)
		if !errors.As(err, &ce) || ce.Code != tc.code || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %v; want %s saying %s", tc.name, err, tc.code, tc.contains)
		}
	}
	// The control: the same block with the right text, engine and key.
	if r, err := orders.Blocks(info.Template, sn.Engine()).Allocate(t.Context(), key, 10); err != nil || r.Len() != 10 {
		t.Errorf("a good block: %v %v", r, err)
	}
}

// A remote Generator that closes notes in the counter's journal, through
// the service, the numbers of its blocks it did not issue (released) and
// that it holds none (closed): the journal explains every number, and
// none is open — whether it used up its first block or closes holding
// the rest of one and the whole next, fetched ahead. The control, a
// Generator that is dropped without Close as a process that dies, leaves
// its block open. Nobody else notes in a client's name: a note needs the
// receipt the service gave with the client's blocks, so another process
// of the same token that names the client (its name is in the journal
// for anyone to read) cannot make its issued numbers unused (lost,
// released) or its open ones issued (closed); and a release must lie in
// the client's blocks.
func TestRemoteCloseNotes(t *testing.T) {
	ts, set := serve(t, `
store: {backend: bolt, path: sn.db, step: 50}
templates:
  orders:  {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
`)
	c := newClient(t, ts, token)
	served, _ := set.Get("orders")
	key, _ := served.Key(sn.Request{})
	j, err := served.Journal()
	if err != nil {
		t.Fatal(err)
	}
	// states audits the counter: how many numbers are in each state.
	states := func() (map[journal.State]int64, *journal.Report) {
		t.Helper()
		events, head, err := journal.ReadJournal(t.Context(), j, key)
		if err != nil {
			t.Fatal(err)
		}
		rep := journal.Audit(key, events, head, time.Now())
		out := map[journal.State]int64{}
		for _, s := range rep.Spans {
			out[s.State] += s.Range.Len()
		}
		return out, rep
	}
	// run issues n numbers from a new remote Generator, waits until it
	// has fetched at least blocks blocks, and closes it unless told not
	// to.
	run := func(n int, blocks int64, close bool) {
		t.Helper()
		g, err := remote.New(t.Context(), c, "orders", remote.Options{Segment: sequence.SegmentOptions{Step: 20, MaxStep: 20}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Issue(t.Context(), sn.Request{N: n}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); g.Stats().Fetches < blocks && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got := g.Stats().Fetches; got < blocks {
			t.Fatalf("%d numbers: %d blocks fetched, want %d", n, got, blocks)
		}
		if close {
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}

	run(25, 2, true) // its first block used up
	run(5, 2, true)  // the rest of its block and the next, fetched ahead
	st, rep := states()
	if !rep.Explained() || st[journal.Open] != 0 || st[journal.Issued] != 30 || st[journal.Unused] != rep.Head.Mark-30 {
		t.Errorf("after two clean closes: explained %v, problems %q, states %v of %d: want 30 issued, the rest unused, none open", rep.Explained(), rep.Problems, st, rep.Head.Mark)
	}
	var victim string
	for _, s := range rep.Spans {
		if s.State == journal.Unused && (!strings.Contains(s.Event.By, "token app, for ") || !strings.Contains(s.Event.Reason, "closed")) {
			t.Errorf("unused %v noted by %q for %q: want the token and the client process, at close", s.Range, s.Event.By, s.Event.Reason)
		}
		victim = strings.TrimPrefix(s.Event.By, "sn serve, token app, for ")
	}

	post := func(tok string, note wire.BlockNote) (int, wire.Code) {
		t.Helper()
		body, _ := json.Marshal(note)
		req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/v1/templates/orders/notes", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e wire.ErrorResponse
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Code
	}
	// Notes in the clients' name, without their receipt, and notes that
	// are not a client's to make: refused, and the audit unchanged.
	mark := rep.Head.Mark
	for _, tc := range []struct {
		note wire.BlockNote
		want wire.Code
	}{
		{wire.BlockNote{Key: key, Kind: "lost", First: 1, Last: mark, Client: victim}, wire.CodeInvalid},
		{wire.BlockNote{Key: key, Kind: "released", First: 1, Last: 5, Client: victim, Receipt: "guessed"}, wire.CodeInvalid},
		{wire.BlockNote{Key: key, Kind: "closed", First: 1, Last: mark, Client: victim}, wire.CodeInvalid},
		{wire.BlockNote{Key: key, Kind: "lost", First: 1, Last: mark, Client: "someone else"}, wire.CodeInvalid},
		{wire.BlockNote{Key: key, Kind: "voided", First: 1, Last: 1, Client: victim}, wire.CodeBadRequest},
		{wire.BlockNote{Key: key, Kind: "closed", First: 1, Last: 1, Client: "a\nline"}, wire.CodeBadRequest},
		{wire.BlockNote{Key: "M-@<seq>-", Kind: "closed", First: 1, Last: 1}, wire.CodeInvalid},
	} {
		if st, code := post(token, tc.note); code != tc.want {
			t.Errorf("note %+v: %d %s, want %s", tc.note, st, code, tc.want)
		}
	}
	if st, code := post("reader-"+token, wire.BlockNote{Key: key, Kind: "closed", First: 1, Last: 1}); code != wire.CodeForbidden {
		t.Errorf("a note with a token that may not issue: %d %s, want forbidden", st, code)
	}
	if after, _ := states(); !maps.Equal(after, st) {
		t.Errorf("the refused notes changed the audit: %v, was %v", after, st)
	}

	// A client's own release must lie in its blocks, receipt or not.
	blocks := c.Generator("orders").Blocks(served.String(), sn.Engine())
	got, err := blocks.Allocate(t.Context(), key, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocks.Note(t.Context(), key, journal.Event{Kind: journal.Released, Range: sequence.Range{First: 1, Last: got.Last}}); err == nil {
		t.Errorf("a release of [1, %d], beyond the client's block %v: taken", got.Last, got)
	}
	if _, err := blocks.Note(t.Context(), key, journal.Event{Kind: journal.Released, Range: got, Reason: "test"}); err != nil {
		t.Errorf("a release of the client's own block %v: %v", got, err)
	}

	// The control: no Close, as a process killed.
	run(5, 2, false)
	if st, _ := states(); st[journal.Open] == 0 {
		t.Errorf("a Generator that never closed left no numbers open (%v): the test cannot tell a close from none", st)
	}
}
