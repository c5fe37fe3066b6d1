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
