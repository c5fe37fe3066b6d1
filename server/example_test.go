package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// The Server is an http.Handler over a config's templates: numbers and
// errors as JSON.
func ExampleNew() {
	cfg, err := config.Decode([]byte(`templates:
  orders: {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"}
`), "yaml")
	if err != nil {
		panic(err)
	}
	set, err := cfg.Build(context.Background()) // the memory store, for the example
	if err != nil {
		panic(err)
	}
	defer set.Close()
	h, err := server.New(set, server.Options{})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	for _, body := range []string{`{"n": 2}`, `{"n": "2"}`} {
		resp, err := http.Post(ts.URL+"/v1/templates/orders/next", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(resp.StatusCode, " ", string(answer))
	}
	// Output:
	// 200 {"numbers":["SN-00000001-8","SN-00000002-6"]}
	// 400 {"error":{"code":"bad_request","message":"the body: n is a JSON string; want a whole number","field":"n"}}
}

// Tokens scoped to a tenant's templates and to actions: a token of shop
// issues from order, may not preview it (403), and finds no template of
// tenant billing (404, as for a name that does not exist).
func ExampleToken() {
	cfg, err := config.Decode([]byte(`
tenants:
  shop: {}
  billing: {}
templates:
  order:   {template: "ORD-@<seq, width=6>", tenant: shop}
  invoice: {template: "INV-@<seq, width=6>", tenant: billing}
`), "yaml")
	if err != nil {
		panic(err)
	}
	set, err := cfg.Build(context.Background()) // the memory store: a store of each template's own
	if err != nil {
		panic(err)
	}
	defer set.Close()
	h, err := server.New(set, server.Options{Scoped: []server.Token{
		{ID: "storefront", Secret: "storefront-0123456789abcdef", Tenant: "shop", Templates: []string{"order"}, Actions: []server.Action{server.Issue}},
		{ID: "accounts", Secret: "accounts-0123456789abcdef", Tenant: "billing", Actions: server.Actions},
	}})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	post := func(path string) {
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer storefront-0123456789abcdef")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(resp.StatusCode, " ", string(answer))
	}
	post("/v1/templates/order/next")
	post("/v1/templates/order/preview")
	post("/v1/templates/invoice/next")
	// Output:
	// 200 {"numbers":["ORD-000001"]}
	// 403 {"error":{"code":"forbidden","message":"token \"storefront\" may not read template order: its scope is issue; ask for a token with read"}}
	// 404 {"error":{"code":"not_found","message":"no template \"invoice\" (templates: order)","field":"name"}}
}
