package testserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is one server process of a test, the same for every kind of
// server: it listens on Port of 127.0.0.1, keeps its files in WorkDir and
// its output in WorkDir/Log, and is started, stopped, killed and restarted the same
// way whatever it is. A harness package fills in the fields, calls
// [Process.Start] from [OnFreePort], and embeds the Process in its Server
// type, which so gets Addr, Dir, Kill, Stop, Restart and String. The fields must
// not change while the server runs. Its methods are safe for
// concurrent use.
type Process struct {
	Pkg     string   // the harness package, for messages: "pgtest"
	Name    string   // the server, for messages: "PostgreSQL"
	Install string   // the Debian package `make test` installs it from
	Bin     string   // the executable
	Args    []string // its arguments
	WorkDir string   // its directory: its working directory, its log, often its data
	Port    int      // the port it listens on
	Log     string   // the file in Dir its output is appended to
	Owner   Owner    // who it runs as

	// Ready reports whether the server accepts connections; Start calls
	// it until it returns nil, the process exits or StartTimeout passes.
	Ready func() error
	// StartTimeout bounds how long a server may take to be ready, crash
	// recovery included.
	StartTimeout time.Duration
	// StopSignal shuts the server down cleanly: SIGTERM, or SIGINT for
	// PostgreSQL's fast shutdown. A server that takes longer than
	// StopTimeout is killed.
	StopSignal  syscall.Signal
	StopTimeout time.Duration
	// KillTree makes Kill kill the server's children too, all at once, as
	// a crash of the machine would (PostgreSQL's backends live on after
	// their postmaster and may commit).
	KillTree bool
	// Busy lists what the log says when the processes of a killed server
	// still hold its data: Start then tries again until StartTimeout.
	Busy []string
	// Shared marks the server shared by the package: Kill, Stop and
	// Restart refuse it.
	Shared bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// Addr returns the server's address, "127.0.0.1:port".
func (p *Process) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port)) }

// Dir returns the server's directory.
func (p *Process) Dir() string { return p.WorkDir }

// LogPath returns the path of the server's log.
func (p *Process) LogPath() string { return filepath.Join(p.WorkDir, p.Log) }

// String describes the server for test logs.
func (p *Process) String() string { return fmt.Sprintf("%s on %s (%s)", p.Name, p.Addr(), p.WorkDir) }

// errBusy says a killed server's processes have not all exited yet.
var errBusy = errors.New("the previous server's processes are still running")

// Start launches the server and waits until it is ready. It returns an
// error wrapping [ErrPortTaken] when someone else has the port, so that
// [OnFreePort] and [Rebind] try again.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s: %s is already running", p.Pkg, p)
	}
	deadline := time.Now().Add(p.StartTimeout)
	for {
		err := p.startOnce(deadline)
		if !errors.Is(err, errBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // another process's exit: no event to wait on
	}
}

func (p *Process) startOnce(deadline time.Time) error {
	log, err := os.OpenFile(p.LogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Pkg, err)
	}
	logStart, _ := log.Seek(0, io.SeekEnd)
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Dir = p.WorkDir
	// A file, not a pipe: Wait must not wait for children that inherit it.
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = p.Owner.SysProcAttr()
	err = cmd.Start()
	log.Close()
	if err != nil {
		return fmt.Errorf("%s: cannot start %s: %w.\n%s", p.Pkg, p.Bin, err, p.install())
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	if err := p.waitReady(exited, deadline); err != nil {
		p.kill(cmd.Process.Pid, true)
		<-exited
		out := p.logSince(logStart)
		if strings.Contains(out, "Address already in use") {
			return fmt.Errorf("%s: %s: %w", p.Pkg, p.Addr(), ErrPortTaken)
		}
		for _, b := range p.Busy {
			if strings.Contains(out, b) {
				return fmt.Errorf("%s: %s did not start: %w\nlog:\n%s", p.Pkg, p, errBusy, out)
			}
		}
		return fmt.Errorf("%s: %s did not start: %v\nlog (%s):\n%s\n%s",
			p.Pkg, p, err, p.LogPath(), out, p.install())
	}
	p.cmd, p.exited = cmd, exited
	return nil
}

func (p *Process) install() string {
	return fmt.Sprintf("Run `make test`, which installs a working %s (apt-get install %s)", p.Name, p.Install)
}

// waitReady calls p.Ready until it returns nil, the process exits or the
// deadline passes.
func (p *Process) waitReady(exited <-chan struct{}, deadline time.Time) error {
	for {
		err := p.Ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v: %w", p.StartTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-time.After(10 * time.Millisecond): // polling another process: no event to wait on
		}
	}
}

// logSince returns the log written from offset on, at most its last 4000
// bytes.
func (p *Process) logSince(offset int64) string {
	b, _ := os.ReadFile(p.LogPath())
	if offset < int64(len(b)) {
		b = b[offset:]
	} else {
		b = nil
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// LogTail returns the last 4000 bytes of the server's log.
func (p *Process) LogTail() string { return p.logSince(0) }

// kill sends SIGKILL to pid, and to its children when p.KillTree is set
// and tree is.
func (p *Process) kill(pid int, tree bool) {
	if p.KillTree && tree {
		killTree(pid)
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// Halt stops the running server, if any: with SIGKILL when kill is set (to
// its children too when KillTree is), else with StopSignal, killing it when
// that takes longer than StopTimeout. It returns when the server has
// exited. Harness packages call it; tests call Kill and Stop.
func (p *Process) Halt(kill bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	pid := p.cmd.Process.Pid
	if kill {
		p.kill(pid, true)
	} else {
		p.cmd.Process.Signal(p.StopSignal)
		p.cmd.Process.Signal(syscall.SIGCONT) // a paused server must run to stop
	}
	select {
	case <-p.exited:
	case <-time.After(p.StopTimeout):
		p.kill(pid, true)
		<-p.exited
	}
	p.cmd, p.exited = nil, nil
}

// Running reports whether the server is up (not killed or stopped).
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

func (p *Process) mustOwn(tb testing.TB, method string) {
	tb.Helper()
	if p.Shared {
		tb.Fatalf("%[1]s: %[2]s on the shared server would break the other tests; use %[1]s.Start for a server of the test's own", p.Pkg, method)
	}
}

// Kill kills the server with SIGKILL, as a crash would, and returns when it
// has exited. What it had made durable survives; [Process.Restart] starts
// it again. Killing a server that is not running does nothing. Kill calls
// tb.Fatalf on a shared server.
func (p *Process) Kill(tb testing.TB) {
	tb.Helper()
	p.mustOwn(tb, "Kill")
	p.Halt(true)
}

// Stop shuts the server down cleanly and waits until it has exited.
// Stopping a server that is not running does nothing. Stop calls tb.Fatalf
// on a shared server.
func (p *Process) Stop(tb testing.TB) {
	tb.Helper()
	p.mustOwn(tb, "Stop")
	p.Halt(false)
}

// Pause stops the server's process with SIGSTOP, as a machine that hangs
// (a long GC pause, a VM frozen, a disk that blocks): it keeps its port and
// its connections and answers nothing until [Process.Resume]. Pausing a
// server that is not running does nothing. Pause calls tb.Fatalf on a
// shared server. A paused server is resumed before it is stopped.
func (p *Process) Pause(tb testing.TB) {
	tb.Helper()
	p.mustOwn(tb, "Pause")
	p.signal(syscall.SIGSTOP)
}

// Resume continues a paused server with SIGCONT.
func (p *Process) Resume(tb testing.TB) {
	tb.Helper()
	p.mustOwn(tb, "Resume")
	p.signal(syscall.SIGCONT)
}

// signal sends sig to the running server, if any.
func (p *Process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.cmd.Process.Signal(sig)
	}
}

// Restart starts a killed or stopped server again on the same port and
// directory, and waits until it is ready (after crash recovery when it was
// killed). Connections opened before are dead. Restart calls tb.Fatalf
// when the server is running, cannot be started, or is shared; call it
// from the test's goroutine.
func (p *Process) Restart(tb testing.TB) {
	tb.Helper()
	p.mustOwn(tb, "Restart")
	if err := Rebind(p.Start); err != nil {
		tb.Fatalf("%v", err)
	}
}

// HaltAll stops the servers of a cluster at once, cleanly (see
// [Process.Halt]), and returns when all have exited.
func HaltAll[S interface{ Halt(kill bool) }](servers []S) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.Halt(false) })
	}
	wg.Wait()
}
