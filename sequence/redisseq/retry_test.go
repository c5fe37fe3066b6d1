package redisseq_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// dropConn is a connection to Redis that loses the reply to one command:
// once it has written a command containing match, it reads the server's
// reply (so the command has run), throws it away, calls hook and fails as a
// dropped connection does. The client cannot tell whether the command ran.
type dropConn struct {
	net.Conn
	match []byte
	hook  func()
	fired *atomic.Bool // shared by the connections of one client: drop once
	armed bool
}

func (c *dropConn) Write(p []byte) (int, error) {
	if !c.fired.Load() && bytes.Contains(p, c.match) {
		c.armed = true
	}
	return c.Conn.Write(p)
}

func (c *dropConn) Read(p []byte) (int, error) {
	if !c.armed {
		return c.Conn.Read(p)
	}
	c.armed = false
	c.fired.Store(true)
	if _, err := c.Conn.Read(p); err != nil {
		return 0, err
	}
	c.hook()
	c.Conn.Close()
	return 0, io.EOF
}

// dropClient returns a client of srv whose connections lose the reply to
// the first command containing match, calling hook when they do.
func dropClient(t *testing.T, srv *redistest.Server, match string, hook func()) *redis.Client {
	var fired atomic.Bool
	var d net.Dialer
	c := redis.NewClient(&redis.Options{
		Addr: srv.Addr(),
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &dropConn{Conn: conn, match: []byte(match), hook: hook, fired: &fired}, nil
		},
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCounterLostInstallReply: the reply to a range install is lost, and
// Redis comes back empty before the installer hears of it; meanwhile another
// process issued numbers from the installed range. go-redis resends a
// command whose reply it lost, so unless the install is sent at most once,
// the resent install puts the same range in the empty Redis again and its
// numbers are issued twice.
func TestCounterLostInstallReply(t *testing.T) {
	tests := []struct {
		name     string
		replicas int
		empty    func(t *testing.T, srv *redistest.Server) // empties Redis
	}{
		{"restart", 0, func(t *testing.T, srv *redistest.Server) {
			srv.Kill(t)
			srv.Restart(t)
		}},
		{"flush-with-replica", 1, func(t *testing.T, srv *redistest.Server) {
			// A flush of data and scripts, replicated: the resent install
			// meets NOSCRIPT, and the one after the fix loads the script.
			rdb := srv.Client(t)
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				t.Errorf("FLUSHALL: %v", err)
			}
			if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
				t.Errorf("SCRIPT FLUSH: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			srv := redistest.Start(t)
			if tt.replicas > 0 {
				redistest.StartReplica(t, srv)
			}
			durable := sequence.NewMemoryAllocator()
			opts := redisseq.CounterOptions{Step: 10, Replicas: tt.replicas}
			other := must(redisseq.NewCounter(srv.Client(t), durable, opts))
			// other installs and spends [1, 10]; the next install is of
			// [11, 20], with the script arguments "10" and "20".
			seen := map[int64]bool{}
			for _, n := range nextN(t, other, "k", 10) {
				seen[n] = true
			}
			dropped := false
			hook := func() {
				// The install of [11, 20] ran; its reply is lost.
				dropped = true
				for _, n := range nextN(t, other, "k", 3) {
					seen[n] = true
				}
				tt.empty(t, srv)
			}
			c := must(redisseq.NewCounter(dropClient(t, srv, "$2\r\n10\r\n$2\r\n20\r\n", hook), durable, opts))
			n, err := c.Next(ctx, "k")
			if !dropped {
				t.Fatalf("Next = %d, %v without installing [11, 20]", n, err)
			}
			if err == nil && seen[n] {
				t.Fatalf("Next after the lost reply = %d, which another process was given before", n)
			}
			checkErr(t, "Next after the lost reply", err, []error{sequence.ErrUnavailable}, "sn:{k}:range")
			for _, n := range nextN(t, c, "k", 12) {
				if seen[n] {
					t.Fatalf("Next = %d, which another process was given before", n)
				}
				seen[n] = true
			}
		})
	}
}
