// Package etcd registers the "etcd" backend of package
// github.com/sngen/sn/config, and the ledgers whose URLs are etcd:// and
// etcds://, which the backends that serve numbers in front of a ledger
// (redis, redis-strict, snowflake) take as a value from
// config.OpenLedger. Import it for its side effect:
//
//	import _ "github.com/sngen/sn/backend/etcd"
//
// It is a module of its own, so that a program that does not use etcd
// does not require etcd's client, gRPC and their dependencies.
//
// An etcd sequence reserves blocks of numbers from a ledger in an etcd
// cluster (package sequence/etcdseq), which survives the loss of a
// minority of its members without losing a range it acknowledged, served
// through a sequence.Segment. It reads ledger, or endpoints, prefix,
// username, password, tls_ca, tls_cert and tls_key; and the steps of its
// Segment: step, min_step, max_step, prefetch, target, fetch_timeout and
// idle. A ledger is a URL:
//
//	etcd://host1:2379,host2:2379,host3:2379                 the members' client URLs (port 2379 by default)
//	etcds://user:password@host1:2379,host2:2379/billing/?ca=/etc/sn/ca.pem&cert=/etc/sn/client.pem&key=/etc/sn/client-key.pem
//
// etcds connects with TLS: ca is the certificate authority's file (default:
// the system's), cert and key a client certificate; user and password are
// etcd's authentication; the path is the prefix of the ledger's keys
// (default sn/). The same cluster may be given as endpoints
// (host:port or http(s)://host:port), with prefix, username, password and
// the tls_ files. A Build opens one client per cluster and user, and
// refuses to start when the cluster has no leader or majority within
// fetch_timeout. A snowflake sequence leases its worker id in an etcd
// ledger's records (etcdseq.NewLeaser).
package etcd

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/snowflake"
)

func init() {
	config.Register("etcd", driver{})
	config.RegisterLedger("etcd", ledgerDriver{})
	config.RegisterLedger("etcds", ledgerDriver{})
}

// fields are an etcd sequence's own fields.
type fields struct {
	// Ledger is the cluster as a URL; see the package comment.
	Ledger string `yaml:"ledger"`

	// Endpoints are the client URLs or host:port of the cluster's
	// members, as a ledger URL names them (etcd://host1:2379,host2:2379);
	// Prefix the prefix of the keys; Username and Password are etcd's
	// authentication; TLSCA, TLSCert and TLSKey the files of TLS (any of
	// them, or an https endpoint, makes it etcds).
	Endpoints []string `yaml:"endpoints"`
	Prefix    string   `yaml:"prefix"`
	Username  string   `yaml:"username"`
	Password  string   `yaml:"password"`
	TLSCA     string   `yaml:"tls_ca"`
	TLSCert   string   `yaml:"tls_cert"`
	TLSKey    string   `yaml:"tls_key"`
}

// decode returns t's fields, with a cluster given as endpoints written as
// a ledger URL.
func decode(t *config.Target) (fields, error) {
	var f fields
	err := t.Decode(&f)
	if err == nil && len(f.Endpoints) > 0 {
		if f.Ledger != "" {
			return f, &config.Error{Field: "endpoints", Err: errors.New("give an etcd cluster as endpoints or as a ledger URL, not both")}
		}
		f.Ledger = etcdURLOf(f)
	}
	return f, err
}

// driver is the etcd backend.
type driver struct{}

// Check requires an etcd ledger URL, or endpoints; the store is the
// cluster and the prefix.
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: slices.Concat([]string{"ledger"}, etcdFields, config.SegmentFields())}
	f, err := decode(t)
	if err != nil {
		return st, err
	}
	if f.Ledger == "" {
		return st, config.Missing("endpoints", "etcd", "endpoints, or a ledger, an etcd URL such as "+etcdForms)
	}
	scheme, _, _ := strings.Cut(strings.ToLower(f.Ledger), "://")
	if scheme != "etcd" && scheme != "etcds" {
		return st, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: the etcd backend takes an etcd URL such as %s; for a SQL ledger use backend: sql", config.Redact(f.Ledger), etcdForms)}
	}
	e, err := parseEtcd(f.Ledger, scheme == "etcds")
	if err != nil {
		return st, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", config.Redact(f.Ledger), err)}
	}
	st.ID = "etcd " + e.id()
	return st, nil
}

// Open connects to the cluster, or shares the client the Build has.
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	f, _ := decode(t) // Check accepted it
	store, err := open(ctx, t, f.Ledger)
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}

// ledgerDriver is the ledger driver of etcd:// and etcds:// URLs.
type ledgerDriver struct{}

// CheckLedger checks the URL.
func (ledgerDriver) CheckLedger(t *config.Target, raw string) (config.LedgerInfo, error) {
	scheme, _, _ := strings.Cut(strings.ToLower(raw), "://")
	e, err := parseEtcd(raw, scheme == "etcds")
	if err != nil {
		return config.LedgerInfo{}, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", config.Redact(raw), err)}
	}
	return config.LedgerInfo{ID: e.id()}, nil
}

// OpenLedger connects to the cluster, or shares the client the Build has.
func (ledgerDriver) OpenLedger(ctx context.Context, t *config.Target, raw string) (config.Ledger, error) {
	st, err := open(ctx, t, raw)
	if err != nil {
		return nil, err
	}
	return store{st}, nil
}

// store is an etcd ledger as a config.Ledger.
type store struct{ *etcdseq.Store }

// Leaser leases snowflake worker ids in the ledger (etcdseq.NewLeaser).
func (s store) Leaser() (snowflake.Leaser, error) {
	return etcdseq.NewLeaser(s.Store, etcdseq.LeaserOptions{})
}

// id is the part of a store ID that names the cluster and the prefix.
func (e *etcdLedger) id() string {
	eps := slices.Sorted(slices.Values(e.endpoints)) // one cluster, whatever the order
	return fmt.Sprintf("ledger etcd %s prefix %s", strings.Join(eps, ","), e.prefix)
}

// etcdFields are the fields that give the etcd backend its cluster, beside
// a ledger URL.
var etcdFields = []string{"endpoints", "prefix", "username", "password", "tls_ca", "tls_cert", "tls_key"}

// etcdURLOf writes the cluster that s's etcd fields give as a ledger URL.
func etcdURLOf(s fields) string {
	secure := s.TLSCA != "" || s.TLSCert != "" || s.TLSKey != ""
	var hosts []string
	for _, ep := range s.Endpoints {
		if h, ok := strings.CutPrefix(ep, "https://"); ok {
			secure, ep = true, h
		}
		hosts = append(hosts, strings.TrimSuffix(strings.TrimPrefix(ep, "http://"), "/"))
	}
	u := url.URL{Scheme: "etcd", Host: strings.Join(hosts, ","), Path: "/" + s.Prefix}
	if secure {
		u.Scheme = "etcds"
	}
	if s.Username != "" || s.Password != "" {
		u.User = url.UserPassword(s.Username, s.Password)
	}
	q := url.Values{}
	for k, v := range map[string]string{"ca": s.TLSCA, "cert": s.TLSCert, "key": s.TLSKey} {
		if v != "" {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// etcdForms shows the URLs of an etcd ledger, for error messages.
const etcdForms = "etcd://host1:2379,host2:2379,host3:2379 (or etcds:// for TLS)"

// etcdLedger is an etcd ledger URL, read:
//
//	etcd://[user:password@]host1:2379,host2:2379[/prefix/][?ca=FILE&cert=FILE&key=FILE]
//
// etcds:// connects with TLS: ca is the file of the certificate authority
// that signed the members' certificates (default: the system's), cert and
// key a client certificate, when the cluster asks for one. user and
// password are etcd's own authentication. The path is the prefix of every
// key the ledger writes (default sn/).
type etcdLedger struct {
	endpoints      []string
	user, password string
	tls            bool
	ca, cert, key  string
	prefix         string
}

// parseEtcd reads an etcd:// or etcds:// URL. Its hosts are read here,
// not by net/url, which takes one host only: each is host, host:port,
// [IPv6] or [IPv6]:port, with port 2379 by default; the same member twice
// is refused.
func parseEtcd(raw string, secure bool) (*etcdLedger, error) {
	e := &etcdLedger{tls: secure, prefix: etcdseq.DefaultPrefix}
	_, rest, _ := strings.Cut(raw, "://")
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		info, err := url.Parse("etcd://" + authority[:i+1] + "h")
		if err != nil {
			return nil, fmt.Errorf("the user and password: %w", err)
		}
		e.user = info.User.Username()
		e.password, _ = info.User.Password()
		authority = authority[i+1:]
	}
	scheme := "http://"
	if secure {
		scheme = "https://"
	}
	seen := map[string]bool{}
	for _, h := range strings.Split(authority, ",") {
		host, port, err := splitEtcdHost(h)
		if err != nil {
			return nil, fmt.Errorf("host %q: %w (want %s)", h, err, etcdForms)
		}
		ep := scheme + net.JoinHostPort(host, port)
		if seen[ep] {
			return nil, fmt.Errorf("host %q is given twice", h)
		}
		seen[ep] = true
		e.endpoints = append(e.endpoints, ep)
	}
	u, err := url.Parse("etcd://h" + tail)
	if err != nil {
		return nil, err
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		e.prefix = strings.TrimSuffix(p, "/") + "/"
	}
	// New checks the prefix, and nothing else: it never uses the client.
	if _, err := etcdseq.New(new(clientv3.Client), etcdseq.Options{Prefix: e.prefix}); err != nil {
		return nil, fmt.Errorf("the path %q: %w", u.Path, err)
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "ca", "cert", "key":
		default:
			return nil, fmt.Errorf("unknown parameter %q (want ca, cert or key, files for TLS)", k)
		}
	}
	e.ca, e.cert, e.key = q.Get("ca"), q.Get("cert"), q.Get("key")
	if (e.ca != "" || e.cert != "" || e.key != "") && !secure {
		return nil, errors.New("ca, cert and key are for TLS: use etcds://")
	}
	if (e.cert == "") != (e.key == "") {
		return nil, errors.New("give both cert and key, or neither")
	}
	return e, nil
}

// splitEtcdHost reads host, host:port, [IPv6] or [IPv6]:port.
func splitEtcdHost(h string) (host, port string, err error) {
	host, port = h, "2379"
	switch {
	case strings.HasPrefix(h, "["):
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", "", errors.New("an IPv6 address without its ]")
		}
		host = h[1:end]
		if rest := h[end+1:]; rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", "", errors.New("text after the ]")
			}
			port = p
		}
		if net.ParseIP(host) == nil {
			return "", "", errors.New("not an IPv6 address")
		}
	case strings.Count(h, ":") == 1:
		host, port, _ = strings.Cut(h, ":")
	case strings.Contains(h, ":"):
		return "", "", errors.New("write an IPv6 address in brackets, [::1]:2379")
	}
	if host == "" {
		return "", "", errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("port %q is not 1 to 65535", port)
	}
	return host, port, nil
}

// client connects to the cluster. It reads the TLS files now, so that a
// missing one is an error at start-up.
func (e *etcdLedger) client(timeout time.Duration) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:   e.endpoints,
		Username:    e.user,
		Password:    e.password,
		DialTimeout: timeout,
		Logger:      zap.NewNop(),
	}
	if e.tls {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if e.ca != "" {
			pem, err := os.ReadFile(e.ca)
			if err != nil {
				return nil, err
			}
			cfg.TLS.RootCAs = x509.NewCertPool()
			if !cfg.TLS.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("ca %s: no PEM certificate in it", e.ca)
			}
		}
		if e.cert != "" {
			c, err := tls.LoadX509KeyPair(e.cert, e.key)
			if err != nil {
				return nil, err
			}
			cfg.TLS.Certificates = []tls.Certificate{c}
		}
	}
	return clientv3.New(cfg)
}

// open opens the etcd ledger at raw for t: one client per cluster and
// user in a Build, one Store per prefix. The cluster must answer
// (etcdseq's Ping: a leader and a majority) within the fetch timeout, so
// that a cluster that is down is an error at start-up.
func open(ctx context.Context, t *config.Target, raw string) (*etcdseq.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shown := config.Redact(raw)
	scheme, _, _ := strings.Cut(strings.ToLower(raw), "://")
	e, err := parseEtcd(raw, scheme == "etcds")
	if err != nil {
		return nil, fmt.Errorf("backend/etcd: ledger %s: %w", shown, err)
	}
	timeout := t.FetchTimeout()
	// Targets share a client only if it would be the same: the same
	// members, user, password and TLS files.
	sum := sha256.Sum256([]byte(e.password))
	key := fmt.Sprintf("etcd %s user %q password %x tls %v ca %q cert %q key %q",
		strings.Join(e.endpoints, ","), e.user, sum[:8], e.tls, e.ca, e.cert, e.key)
	cli, err := config.Share(t, key, func() (*clientv3.Client, error) {
		cli, err := e.client(timeout)
		if err != nil {
			return nil, fmt.Errorf("backend/etcd: ledger %s: %w", shown, err)
		}
		return cli, nil
	})
	if err != nil {
		return nil, err
	}
	return config.Share(t, key+" prefix "+e.prefix, func() (*etcdseq.Store, error) {
		st, err := etcdseq.New(cli, etcdseq.Options{Prefix: e.prefix, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := st.Ping(pctx); err != nil {
			if pctx.Err() != nil && ctx.Err() == nil {
				err = fmt.Errorf("%w: the cluster did not answer within %v (fetch_timeout): no member reachable (check the hosts, etcd:// or etcds:// and the TLS files), or no leader and majority: %w", sequence.ErrUnavailable, timeout, err)
			}
			return nil, fmt.Errorf("backend/etcd: ledger %s: %w", shown, err)
		}
		return st, nil
	})
}
