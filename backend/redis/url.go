package redis

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/sngen/sn/config"
)

// NewClient returns a client for a URL in one of the forms described
// in the package comment ("Redis URLs"): a *goredis.Client for redis://, rediss:// and
// unix://, a *goredis.ClusterClient for redis+cluster:// and
// rediss+cluster://. Its commands end at their context's deadline
// (go-redis's ContextTimeoutEnabled), so that a sequence's fetch_timeout
// bounds a server that does not answer. It does not connect.
func NewClient(rawURL string) (goredis.UniversalClient, error) {
	client, err := parseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("backend/redis: URL %q: %w", config.Redact(rawURL), err)
	}
	return client(), nil
}

// parseURL checks rawURL and returns a function that makes a client for
// it.
func parseURL(rawURL string) (func() goredis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, errors.New("want redis://host:port, rediss://, unix://, redis+cluster://host:port,host:port or redis+sentinel://host:port,host:port/master")
	}
	switch scheme {
	case "redis", "rediss", "unix":
		if _, err := url.Parse(rawURL); err != nil {
			return nil, config.URLSyntax(rawURL, err)
		}
		opt, err := goredis.ParseURL(rawURL)
		if err != nil {
			return nil, err
		}
		opt.ContextTimeoutEnabled = true
		return func() goredis.UniversalClient { return goredis.NewClient(opt) }, nil
	case "redis+cluster", "rediss+cluster":
		u, err := clusterURL(strings.TrimSuffix(scheme, "+cluster"), rest)
		if err != nil {
			return nil, config.URLSyntax(rawURL, err)
		}
		opt, err := goredis.ParseClusterURL(u)
		if err != nil {
			return nil, err
		}
		opt.ContextTimeoutEnabled = true
		return func() goredis.UniversalClient { return goredis.NewClusterClient(opt) }, nil
	case "redis+sentinel", "rediss+sentinel":
		u, err := sentinelURL(strings.TrimSuffix(scheme, "+sentinel"), rest)
		if err != nil {
			return nil, config.URLSyntax(rawURL, err)
		}
		opt, err := goredis.ParseFailoverURL(u)
		if err != nil {
			return nil, err
		}
		opt.ContextTimeoutEnabled = true
		return func() goredis.UniversalClient { return goredis.NewFailoverClient(opt) }, nil
	}
	return nil, fmt.Errorf("unknown scheme %q (want redis, rediss, unix, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel)", scheme)
}

// splitHosts splits "user:pw@h1:p1,h2:p2/path?q" into its user
// information ("user:pw@"), its hosts and the rest ("/path?q").
func splitHosts(rest string) (userinfo string, hosts []string, tail string, err error) {
	authority := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, authority = authority[:i+1], authority[i+1:]
	}
	hosts = strings.Split(authority, ",")
	for _, h := range hosts {
		if h == "" {
			return "", nil, "", fmt.Errorf("empty host in %q", authority)
		}
	}
	return userinfo, hosts, tail, nil
}

// sentinelURL turns "user:pw@h1:p1,h2:p2/master[/db][?q]" into the form
// ParseFailoverURL takes: "scheme://user:pw@h1:p1/db?q&master_name=master&addr=h2:p2".
func sentinelURL(scheme, rest string) (string, error) {
	userinfo, hosts, tail, err := splitHosts(rest)
	if err != nil {
		return "", err
	}
	path, query, _ := strings.Cut(tail, "?")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if parts[0] == "" || len(parts) > 2 {
		return "", errors.New("want the master's name, and optionally a database number, as the path: redis+sentinel://host1:26379,host2:26379/mymaster/0")
	}
	q := url.Values{}
	if query != "" {
		var err error
		if q, err = url.ParseQuery(query); err != nil {
			return "", err
		}
	}
	q.Set("master_name", parts[0])
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	u := scheme + "://" + userinfo + hosts[0]
	if len(parts) == 2 {
		u += "/" + parts[1]
	}
	return u + "?" + q.Encode(), nil
}

// clusterURL turns "user:pw@h1:p1,h2:p2/?q" into the form ParseClusterURL
// takes: "scheme://user:pw@h1:p1/?q&addr=h2:p2".
func clusterURL(scheme, rest string) (string, error) {
	userinfo, hosts, tail, err := splitHosts(rest)
	if err != nil {
		return "", err
	}
	path, query, _ := strings.Cut(tail, "?")
	if path != "" && path != "/" {
		return "", fmt.Errorf("a cluster has no database number (found path %q)", path)
	}
	q := url.Values{}
	if query != "" {
		var err error
		if q, err = url.ParseQuery(query); err != nil {
			return "", err
		}
	}
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	u := scheme + "://" + userinfo + hosts[0]
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u, nil
}
