package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/server"
	"github.com/sngen/sn/wire"
)

// A block is refused to a client whose clock is off, a block of a
// template that hands out none says why, and the template tells its
// largest block, its engine and the token's actions.
func TestBlocksRefused(t *testing.T) {
	t.Setenv("SN_BLOCKS_TEST_KEY", "0123456789abcdef0123")
	ts, _ := startConfig(t, `
store: {backend: bolt, path: sn.db, max_step: 5000}
templates:
  orders: {template: "SN-@<seq, width=8>"}
  secret: {template: "S@<seq, width=10, obfuscate=k>"}
obfuscation:
  k: {env: SN_BLOCKS_TEST_KEY}
`, server.Options{})
	var info wire.TemplateInfo
	if st, _ := call(t, ts, "GET", "/v1/templates/orders", nil, &info); st != 200 || info.MaxBlock != 5000 || info.Engine != sn.Engine() || len(info.Actions) != 4 {
		t.Fatalf("GET orders: %d %+v", st, info)
	}
	block := func(name string, now time.Time, nowText string) (int, wire.ErrorResponse, wire.BlockResponse) {
		if nowText == "" {
			nowText = now.Format(time.RFC3339Nano)
		}
		var e wire.ErrorResponse
		var out wire.BlockResponse
		req := wire.BlockRequest{Key: "SN-@<seq>", N: 10, Template: info.Template, Engine: sn.Engine(), Now: nowText}
		st, _ := call(t, ts, "POST", "/v1/templates/"+name+"/blocks", req, &e)
		if st == 200 {
			call(t, ts, "POST", "/v1/templates/"+name+"/blocks", req, &out)
		}
		return st, e, out
	}
	// The message gives the client's offset with its sign: a client an
	// hour ahead is "1h0m0s ahead of" the server's.
	for skew, want := range map[time.Duration]string{time.Hour: "1h0m0s ahead of the server's", -3 * time.Second: "behind the server's", 3 * time.Second: "ahead of the server's"} {
		st, e, _ := block("orders", time.Now().Add(skew), "")
		if st != 409 || e.Error.Code != wire.CodeClockSkew || !strings.Contains(e.Error.Message, "set its clock") || !strings.Contains(e.Error.Message, want) {
			t.Errorf("a clock %v off: %d %+v; want %q", skew, st, e, want)
		}
	}
	if st, e, _ := block("orders", time.Time{}, "yesterday"); st != 400 || e.Error.Field != "now" {
		t.Errorf("now yesterday: %d %+v", st, e)
	}
	// The control: the same block on time.
	if st, e, out := block("orders", time.Now(), ""); st != 200 || out.Last-out.First != 9 {
		t.Errorf("a block on time: %d %+v %+v", st, e, out)
	}
	// A client's name and a void's reason go to the journal: no control
	// character, which would draw lines in sn gaps.
	req := wire.BlockRequest{Key: "SN-@<seq>", N: 10, Template: info.Template, Engine: sn.Engine(), Now: time.Now().Format(time.RFC3339Nano), Client: "host\nsn serve, token admin\x1b[2K"}
	var e wire.ErrorResponse
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/blocks", req, &e); st != 400 || e.Error.Field != "client" {
		t.Errorf("a client with a line break: %d %+v", st, e)
	}
	if st, _ := call(t, ts, "POST", "/v1/templates/orders/void", wire.VoidRequest{Number: "SN-00000001", Reason: "ok\r\x1b[2Kforged"}, &e); st != 400 || e.Error.Field != "reason" {
		t.Errorf("a reason with a carriage return: %d %+v", st, e)
	}
	var secret wire.TemplateInfo
	call(t, ts, "GET", "/v1/templates/secret", nil, &secret)
	if secret.MaxBlock != 0 || !strings.Contains(secret.NoBlocks, "obfuscate=k") {
		t.Errorf("GET secret: %+v", secret)
	}
	if st, e, _ := block("secret", time.Now(), ""); st != 501 || e.Error.Code != wire.CodeUnsupported || !strings.Contains(e.Error.Message, "its key stays with the service") {
		t.Errorf("a block of secret: %d %+v", st, e)
	}
}
