package server_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/server"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// A variable the template does not read is refused with var_invalid, and
// its name is echoed in full (not through quote(), which every other
// message uses to keep the first 64 bytes): in the answer's message, in
// its field, and in the log line. json.Marshal writes '<' as \u003c, so a
// 1 MiB body of such names comes back as ~12 MiB of answer and as many in
// the log, per request, without a token being of any help to whoever has
// one.
func TestAdversaryUnusedVarEchoUnbounded(t *testing.T) {
	var logs lockedBuf
	ts, _ := startConfig(t, `
store: {backend: memory}
templates:
  orders: {template: "SN-@<seq>"}
`, server.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	name := strings.Repeat("<", 1<<20-100)
	body := []byte(`{"vars":{"` + name + `":""}}`) // '<' as itself: 1 byte a character
	resp, err := http.Post(ts.URL+"/v1/templates/orders/next", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ans, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("request %d bytes -> %d %d bytes answered, %d bytes logged; answer starts %.120s", len(body), resp.StatusCode, len(ans), logs.b.Len(), ans)
	if len(ans) > 16<<10 || logs.b.Len() > 16<<10 {
		t.Errorf("a refused variable name of %d bytes: %d bytes of answer, %d bytes of log (other messages keep 64 bytes of a value)", len(name), len(ans), logs.b.Len())
	}
}
