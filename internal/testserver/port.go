package testserver

import (
	"errors"
	"fmt"
	"net"
	"time"
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

// OnFreePort calls start with free ports until it succeeds, fails for
// another reason than [ErrPortTaken], or [BindAttempts] ports were taken;
// it returns start's last error. A harness starts a new server with it;
// pkg names the harness in the error of a machine with no free port.
func OnFreePort(pkg string, start func(port int) error) error {
	var err error
	for range BindAttempts {
		port, perr := FreePort()
		if perr != nil {
			return fmt.Errorf("%s: no free port on 127.0.0.1: %w", pkg, perr)
		}
		if err = start(port); !errors.Is(err, ErrPortTaken) {
			return err
		}
	}
	return err
}

// Rebind calls start, which starts a server again on its own port, until
// it succeeds, fails for another reason than [ErrPortTaken], or has tried
// [BindAttempts] times, waiting 100ms between tries for whoever took the
// port to release it. A harness restarts a server with it.
func Rebind(start func() error) error {
	var err error
	for range BindAttempts {
		if err = start(); !errors.Is(err, ErrPortTaken) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
