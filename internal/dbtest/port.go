package dbtest

import (
	"errors"
	"net"
)

// BindAttempts is how many free ports a harness tries before giving up on
// starting a server.
const BindAttempts = 5

// ErrPortTaken means a server could not listen on the port it was given:
// someone took it between [FreePort] and the server's start. The harness
// then tries another port, up to [BindAttempts] times.
var ErrPortTaken = errors.New("port already in use")

// FreePort returns a 127.0.0.1 TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
