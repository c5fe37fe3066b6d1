package backend

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
)

// etcdDriver is the etcd backend: blocks of numbers reserved from a ledger
// in an etcd cluster (etcdseq), served through a sequence.Segment.
type etcdDriver struct{}

// Check requires an etcd ledger URL; the store is the cluster and the
// prefix.
func (etcdDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{Durable: true, Fields: slices.Concat([]string{"ledger"}, etcdFields, segmentFields)}
	s, err := decode(t)
	if err != nil {
		return st, err
	}
	if s.Ledger == "" {
		return st, missing("endpoints", "etcd", "endpoints, or a ledger, an etcd URL such as "+etcdForms)
	}
	l, err := parseLedger(s.Ledger)
	if err == nil && l.etcd == nil {
		err = fmt.Errorf("the etcd backend takes an etcd URL such as %s; for a SQL ledger use backend: sql", etcdForms)
	}
	if err != nil {
		return st, &config.Error{Field: "ledger", Err: fmt.Errorf("ledger %q: %w", l.shown, err)}
	}
	st.ID = "etcd " + ledgerID(s)
	return st, nil
}

// Open connects to the cluster, or shares the client the Build has.
func (etcdDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	store, err := openLedger(ctx, t)
	if err != nil {
		return nil, err
	}
	return config.Serve(t, store)
}

// etcdFields are the fields that give the etcd backend its cluster, beside
// a ledger URL.
var etcdFields = []string{"endpoints", "prefix", "username", "password", "tls_ca", "tls_cert", "tls_key"}

// etcdURLOf writes the cluster that s's etcd fields give as a ledger URL.
func etcdURLOf(s seq) string {
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

// openEtcd opens the etcd ledger of t: one client per cluster and user in
// a Build, one Store per prefix. The cluster must answer (etcdseq's Ping:
// a leader and a majority) within the fetch timeout, so that a cluster
// that is down is an error at start-up.
func openEtcd(ctx context.Context, t *config.Target, l ledger) (*etcdseq.Store, error) {
	s, _ := decode(t)
	e := l.etcd
	timeout := fetchTimeout(s)
	// Targets share a client only if it would be the same: the same
	// members, user, password and TLS files.
	sum := sha256.Sum256([]byte(e.password))
	key := fmt.Sprintf("etcd %s user %q password %x tls %v ca %q cert %q key %q",
		strings.Join(e.endpoints, ","), e.user, sum[:8], e.tls, e.ca, e.cert, e.key)
	cli, err := config.Share(t, key, func() (*clientv3.Client, error) {
		cli, err := e.client(timeout)
		if err != nil {
			return nil, fmt.Errorf("backend: ledger %s: %w", l.shown, err)
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
			return nil, fmt.Errorf("backend: ledger %s: %w", l.shown, err)
		}
		return st, nil
	})
}
