package redistest

import (
	"net"
	"testing"
)

// SilentServer listens on a free 127.0.0.1 port and accepts connections but
// never answers, like a server that hangs or a port behind a firewall. It
// returns the address; the listener and its connections close at the end
// of the test.
func SilentServer(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	tb.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}
