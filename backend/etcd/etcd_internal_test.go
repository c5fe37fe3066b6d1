package etcd

import (
	"slices"
	"strings"
	"testing"
)

// etcd URLs: hosts are read one by one, IPv6 in brackets, a port 1 to
// 65535 (2379 by default), no member twice; the prefix is the path, with
// no part that could nest in another ledger's keys.
func TestParseEtcd(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		endpoints []string
		prefix    string
		err       string
	}{
		{raw: "etcd://h1:2379,h2:2380,h3", endpoints: []string{"http://h1:2379", "http://h2:2380", "http://h3:2379"}, prefix: "sn/"},
		{raw: "etcds://u:p%40ss@h1/billing/", endpoints: []string{"https://h1:2379"}, prefix: "billing/"},
		{raw: "etcd://[::1]:2379,[::2]", endpoints: []string{"http://[::1]:2379", "http://[::2]:2379"}, prefix: "sn/"},
		{raw: "etcd://h1/a/b", endpoints: []string{"http://h1:2379"}, prefix: "a/b/"},
		{raw: "etcd://h1:abc,h2:2379", err: `port "abc" is not 1 to 65535`},
		{raw: "etcd://h1:0", err: `port "0" is not 1 to 65535`},
		{raw: "etcd://h1:2379:2380", err: "write an IPv6 address in brackets"},
		{raw: "etcd://::1", err: "write an IPv6 address in brackets"},
		{raw: "etcd://[::1", err: "without its ]"},
		{raw: "etcd://[h1]", err: "not an IPv6 address"},
		{raw: "etcd://h1,h1:2379", err: "given twice"},
		{raw: "etcd://,h1", err: "no host"},
		{raw: "etcd://h1/a/../b", err: `part ".."`},
		{raw: "etcd://h1/sn/n/", err: `part "n"`},
		{raw: "etcd://h1//", err: `part ""`},
	} {
		e, err := parseEtcd(tt.raw, strings.HasPrefix(tt.raw, "etcds"))
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseEtcd(%q): %v; want an error saying %q", tt.raw, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseEtcd(%q): %v", tt.raw, err)
		case !slices.Equal(e.endpoints, tt.endpoints) || e.prefix != tt.prefix:
			t.Errorf("parseEtcd(%q) = %q, prefix %q; want %q, %q", tt.raw, e.endpoints, e.prefix, tt.endpoints, tt.prefix)
		}
	}
	// One cluster is one store, whatever the order of its members.
	e1, _ := parseEtcd("etcd://h2,h1", false)
	e2, _ := parseEtcd("etcd://h1,h2", false)
	if a, b := e1.id(), e2.id(); a != b {
		t.Errorf("two orders of one cluster: %q and %q", a, b)
	}
}
