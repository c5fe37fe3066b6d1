package server

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sngen/sn/wire"
)

// Limits bound what clients may hold of a server's connections. The zero
// value gives the defaults.
type Limits struct {
	// MaxConns is the most connections open at once. A connection past it
	// takes the place of the one idle longest (between requests, or
	// still sending its first request's header), or is closed at once
	// when every connection is busy with a request.
	// default: 1024.
	MaxConns int
	// MaxConnsPerClient is the most connections of one client (one
	// remote address) open at once, handled as MaxConns within the
	// client's own. Every client behind one proxy, and every local
	// client, is one client.
	// default: 256.
	MaxConnsPerClient int
}

// HTTPServer returns an http.Server for h with bounds fit for a server
// that strangers may reach: a request's header must arrive within 5 s and
// hold at most 16 KiB (net/http's default is 1 MiB, so a thousand idle
// clients could hold a GiB), a whole request within 30 s, an answer be
// written within 60 s, and a keep-alive connection idle for 30 s is
// closed. (net/http allows 4 KiB over MaxHeaderBytes before it answers
// 431.) Serve it on a listener from [Limit]. On the internet, put a
// proxy in front (TLS, rate limits per client), as the README says.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// MaxHeaderBytes is the largest request header [HTTPServer] reads: a
// larger one is answered 431, in JSON (see [Limit]).
const MaxHeaderBytes = 16 << 10

// Limit returns a listener that accepts from ln within lim, and sets
// srv.ConnState to follow which connections are idle. It also answers in
// JSON the errors net/http writes itself, before any handler runs (400 for
// a request it cannot read, 431 for a header over srv.MaxHeaderBytes, 501
// and 505 for a transfer encoding or an HTTP version it does not speak),
// unless the connection is TLS that net/http itself decrypts: wrap ln in
// tls.NewListener before Limit, and call srv.Serve, to have those in JSON
// too.
func Limit(ln net.Listener, srv *http.Server, lim Limits) net.Listener {
	if lim.MaxConns <= 0 {
		lim.MaxConns = 1024
	}
	if lim.MaxConnsPerClient <= 0 {
		lim.MaxConnsPerClient = 256
	}
	l := &limiter{Listener: ln, lim: lim, conns: map[*limitedConn]bool{}, clients: map[string]int{}}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		l.state(c, st)
		if prev != nil {
			prev(c, st)
		}
	}
	return l
}

// limiter is the listener of Limit.
type limiter struct {
	net.Listener
	lim Limits

	mu      sync.Mutex
	conns   map[*limitedConn]bool // open; true while idle
	clients map[string]int        // open connections by remote host
}

// limitedConn is a connection of a limiter.
type limitedConn struct {
	net.Conn
	l         *limiter
	client    string
	idleSince time.Time
	closed    sync.Once
}

func (l *limiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := c.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(client); err == nil {
			client = h
		}
		lc := &limitedConn{Conn: c, l: l, client: client, idleSince: time.Now()}
		var victims []*limitedConn
		l.mu.Lock()
		ok := true
		if l.clients[client] >= l.lim.MaxConnsPerClient {
			if v := l.idlest(client, nil); v != nil {
				victims = append(victims, v)
			} else {
				ok = false
			}
		}
		if ok && len(l.conns)-len(victims) >= l.lim.MaxConns {
			var taken *limitedConn
			if len(victims) > 0 {
				taken = victims[0]
			}
			if v := l.idlest("", taken); v != nil {
				victims = append(victims, v)
			} else {
				ok = false
			}
		}
		if ok {
			for _, v := range victims {
				l.forget(v)
			}
			l.conns[lc] = true
			l.clients[client]++
		}
		l.mu.Unlock()
		if !ok {
			c.Close() // every connection is busy: this one waits its turn with the client
			continue
		}
		for _, v := range victims {
			v.closed.Do(func() { v.Conn.Close() })
		}
		return lc, nil
	}
}

// idlest returns the connection idle longest, of client ("" for any) and
// other than except, or nil; l.mu is held.
func (l *limiter) idlest(client string, except *limitedConn) *limitedConn {
	var best *limitedConn
	for c, idle := range l.conns {
		if idle && c != except && (client == "" || c.client == client) && (best == nil || c.idleSince.Before(best.idleSince)) {
			best = c
		}
	}
	return best
}

// forget removes c; l.mu is held.
func (l *limiter) forget(c *limitedConn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.clients[c.client]--; l.clients[c.client] <= 0 {
		delete(l.clients, c.client)
	}
}

// state follows srv.ConnState.
func (l *limiter) state(c net.Conn, st http.ConnState) {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok { // a *tls.Conn of net/http's own
		c = u.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.conns[lc]; !open {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		l.conns[lc], lc.idleSince = true, time.Now()
	case http.StateActive:
		l.conns[lc] = false
	case http.StateClosed, http.StateHijacked:
		l.forget(lc)
	}
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.forget(c)
	c.l.mu.Unlock()
	var err error
	c.closed.Do(func() { err = c.Conn.Close() })
	return err
}

// netHTTPError is how net/http ends the answers it writes itself: a
// plain-text body and no Date header, which no handler's answer has.
var netHTTPError = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

// Write passes b on, but for an error net/http writes itself, which it
// answers in JSON like every other error.
func (c *limitedConn) Write(b []byte) (int, error) {
	status, rest, ok := bytes.Cut(b, netHTTPError)
	if !ok || !(bytes.HasPrefix(status, []byte("HTTP/1.1 4")) || bytes.HasPrefix(status, []byte("HTTP/1.1 5"))) {
		return c.Conn.Write(b)
	}
	line := string(status[len("HTTP/1.1 "):])
	code, msg := wire.CodeBadRequest, string(rest)
	switch {
	case bytes.HasPrefix(status, []byte("HTTP/1.1 431")):
		code, msg = wire.CodeTooLarge, fmt.Sprintf("the request's header is over %d bytes", MaxHeaderBytes)
	case bytes.HasPrefix(status, []byte("HTTP/1.1 5")): // 501 for a transfer encoding, 505 for a version net/http does not speak
		code = wire.CodeBadRequest
	}
	body := fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`+"\n", code, msg)
	out := fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", line, len(body), body)
	if _, err := c.Conn.Write([]byte(out)); err != nil {
		return 0, err
	}
	return len(b), nil
}
