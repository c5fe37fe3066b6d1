package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/metrics"
	"github.com/sngen/sn/server"
)

// tokensEnv names the environment variable that holds sn serve's bearer
// tokens, separated by commas or white space.
const tokensEnv = "SN_TOKENS"

// shutdownGrace is how long sn serve lets in-flight requests finish after
// SIGTERM.
const shutdownGrace = 30 * time.Second

func cmdServe(e *env, args []string) error {
	f := newFlags("serve")
	listen := f.fs.String("listen", "", "")
	cert := f.fs.String("tls-cert", "", "")
	key := f.fs.String("tls-key", "", "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	switch {
	case len(pos) > 0:
		return usagef(f.cmd, "unexpected argument %q", pos[0])
	case f.config == "":
		return usagef(f.cmd, "give the templates to serve: --config FILE")
	case f.template != "":
		return usagef(f.cmd, "sn serve serves a config file's templates: -t does not apply")
	case (*cert == "") != (*key == ""):
		return usagef(f.cmd, "give both --tls-cert and --tls-key, or neither")
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return &inputError{err}
	}
	dir := filepath.Dir(f.config)
	if err := cfg.ValidateIn(dir); err != nil {
		return &inputError{err}
	}
	sv, err := server.SettingsOf(cfg)
	if err != nil {
		return &inputError{err}
	}
	if *listen != "" {
		sv.Listen = *listen
	}
	if sv.Listen == "" {
		sv.Listen = "127.0.0.1:8080"
	}
	if *cert != "" {
		sv.TLSCert, sv.TLSKey = *cert, *key
	} else if sv.TLSCert != "" {
		sv.TLSCert, sv.TLSKey = inDir(dir, sv.TLSCert), inDir(dir, sv.TLSKey)
	}
	tokens, err := serveTokens(sv, dir)
	if err != nil {
		return &inputError{err}
	}
	var tlsConfig *tls.Config
	if sv.TLSCert != "" { // read now, so that a bad file fails the start, not the first request
		cert, err := tls.LoadX509KeyPair(sv.TLSCert, sv.TLSKey)
		if err != nil {
			return &inputError{fmt.Errorf("the TLS certificate and key: %w", err)}
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	host, _, err := net.SplitHostPort(sv.Listen)
	if err != nil {
		return usagef(f.cmd, "--listen %q: want HOST:PORT, such as 127.0.0.1:8080", sv.Listen)
	}
	if ip := net.ParseIP(host); len(tokens) == 0 && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return usagef(f.cmd, "--listen %s without tokens: anyone who reaches the port could issue numbers; set %s to one or more bearer tokens, or listen on 127.0.0.1", sv.Listen, cmp.Or(sv.TokensEnv, tokensEnv))
	}
	for _, name := range cfg.Names() {
		if st, err := cfg.StoreInfo(name, config.WithDir(dir)); err == nil && !st.Durable {
			return &inputError{fmt.Errorf("%s: template %q keeps its numbers in %s, which forgets them when sn serve stops: its numbers would repeat after a restart (give it a store: bolt, sql or redis)", f.config, name, st.ID)}
		}
	}

	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := metrics.New(reg)
	if err != nil {
		return err
	}
	// Each Generator reports its calls, and the requests the server
	// refuses before it (sn.Generator.Refuse), through the metrics
	// middleware: one path for every request to issue.
	set, err := cfg.Build(ctx, config.WithDir(dir), config.WithOptions(sn.WithMiddleware(m.Middleware())))
	if err != nil {
		return f.explain(err)
	}
	for _, name := range set.Names() { // label each store with its ID
		seq, _ := set.Gen(name)
		id, _ := set.StoreID(name)
		m.Watch(id, seq)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))
	h, err := server.New(set, server.Options{
		Scoped: tokens, TokenGrace: sv.Grace(), MaxBody: sv.MaxBody, Logger: logger,
		MetricsFor: func(templates, stores map[string]bool, all bool) http.Handler {
			return metrics.Handler(reg, templates, stores, all)
		},
	})
	if err != nil {
		set.Close()
		return &inputError{err}
	}
	m.WatchCapacity(func() map[string]metrics.Capacity {
		out := map[string]metrics.Capacity{}
		for name, c := range h.Capacities() {
			mc := metrics.Capacity{Ratio: c.Ratio}
			if c.RunsOut != nil {
				mc.RunsOut = max(time.Until(*c.RunsOut), time.Second)
			}
			out[name] = mc
		}
		return out
	})
	ln, err := net.Listen("tcp", sv.Listen)
	if err != nil {
		set.Close()
		return err
	}
	srv := server.HTTPServer(h)
	srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	if tlsConfig != nil {
		// TLS under the limits, so that net/http's own errors are JSON
		// too (see server.Limit).
		ln = tls.NewListener(ln, tlsConfig)
	}
	ln = server.Limit(ln, srv, server.Limits{})
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	logger.Info("sn serve: listening", "url", scheme+"://"+ln.Addr().String(), "templates", strings.Join(cfg.Names(), ","), "auth", len(tokens) > 0, "monitor", scheme+"://"+ln.Addr().String()+"/monitor")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if len(tokens) > 0 {
		go rotate(ctx, logger, m, h, f.config, sv)
	}
	var runErr error
	select {
	case runErr = <-served:
	case <-ctx.Done():
		// In-flight requests finish and their numbers reach the
		// clients; then the stores close. A request cut off by the
		// grace period loses its numbers: a gap, never a repeat.
		// Answers from now on say Connection: close and /readyz says
		// 503, so that clients and balancers go elsewhere; a client
		// that sends on a connection as it closes gets no answer and
		// may send again (the Go client does, once): for next that
		// costs at most a gap.
		logger.Info("sn serve: shutting down", "grace", shutdownGrace)
		h.Drain()
		srv.SetKeepAlivesEnabled(false)
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		runErr = srv.Shutdown(sctx)
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	if cerr := set.Close(); runErr == nil {
		runErr = cerr
	}
	logger.Info("sn serve: stopped")
	return runErr
}

// rotatePoll is how often sn serve looks whether its config file or
// tokens file changed.
var rotatePoll = 5 * time.Second

// rotate reads the tokens again on SIGHUP, or when the config file or the
// tokens file changes (a mounted secret replaced), and gives them to h:
// a token taken out is accepted for the grace period still. A file that
// does not read leaves the tokens as they were, and says why, in the log
// and in sn_tokens_stale.
func rotate(ctx context.Context, logger *slog.Logger, m *metrics.Metrics, h *server.Server, path string, sv server.Settings) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	dir := filepath.Dir(path)
	stamp := func() string {
		var b strings.Builder
		for _, p := range []string{path, inDir(dir, sv.TokensFile)} {
			if fi, err := os.Stat(p); err == nil && p != dir {
				fmt.Fprintf(&b, "%s %d %d;", p, fi.Size(), fi.ModTime().UnixNano())
			}
		}
		return b.String()
	}
	last := stamp()
	tick := time.NewTicker(rotatePoll)
	defer tick.Stop()
	for {
		why := "SIGHUP"
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-tick.C:
			if now := stamp(); now == last {
				continue
			}
			why = "a file changed"
		}
		last = stamp()
		tokens, err := func() ([]server.Token, error) {
			cfg, err := config.Load(path)
			if err != nil {
				return nil, err
			}
			nsv, err := server.SettingsOf(cfg)
			if err != nil {
				return nil, err
			}
			sv = nsv
			return serveTokens(sv, dir)
		}()
		if err == nil {
			err = h.Rotate(tokens, sv.Grace())
		}
		m.TokensRead(err == nil)
		if err != nil {
			logger.Error("sn serve: the tokens were not read again; the old ones stay", "why", why, "err", err)
			continue
		}
		ids := make([]string, len(tokens))
		for i, t := range tokens {
			ids[i] = t.ID
		}
		logger.Info("sn serve: tokens read again", "why", why, "tokens", strings.Join(ids, ","), "grace", sv.Grace())
	}
}

// serveTokens reads the bearer tokens from the environment variable and
// the file the serve section names, with their scopes.
func serveTokens(sv server.Settings, dir string) ([]server.Token, error) {
	secrets, err := serveSecrets(sv, dir)
	if err != nil {
		return nil, err
	}
	return sv.ScopedTokens(secrets)
}

// serveSecrets reads the secrets of the bearer tokens from the
// environment variable and the file the serve section names.
func serveSecrets(sv server.Settings, dir string) ([]string, error) {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
	}
	tokens := split(os.Getenv(cmp.Or(sv.TokensEnv, tokensEnv)))
	if sv.TokensFile != "" {
		path := inDir(dir, sv.TokensFile)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("serve.tokens_file: %w", err)
		}
		for line := range strings.Lines(string(data)) {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue // a comment: a token may hold a #
			}
			tokens = append(tokens, split(line)...)
		}
		if len(tokens) == 0 {
			return nil, fmt.Errorf("serve.tokens_file %s: no token in it", path)
		}
	}
	return tokens, nil
}

// inDir resolves a relative path against the config file's directory.
func inDir(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
