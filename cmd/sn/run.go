package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/parser"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1   // a runtime error, or check found an invalid number
	exitUsage       = 2   // bad usage, a bad template or config file
	exitInterrupted = 130 // 128 + SIGINT
	exitBrokenPipe  = 141 // 128 + SIGPIPE: the reader of stdout went away
)

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	out    *bufio.Writer // stdout
	stderr io.Writer
	tty    bool // stderr is a terminal: progress may be shown
}

// usageError is bad usage of a command: its message and the command's usage
// go to stderr, and sn exits with status 2.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

// inputError is a bad template or config file: sn exits with status 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// errInvalid is returned by check when a number is invalid: the numbers'
// reasons are already printed, sn exits with status 1.
var errInvalid = errors.New("invalid numbers")

// errInterrupted is returned by a command cut short by a signal, after it
// reported what it did.
var errInterrupted = errors.New("interrupted")

var commands = map[string]func(*env, []string) error{
	"next":     cmdNext,
	"validate": cmdValidate,
	"parse":    cmdParse,
	"floor":    cmdFloor,
	"explain":  cmdExplain,
	"preview":  cmdPreview,
	"serve":    cmdServe,
	"series":   cmdSeries,
	"gaps":     cmdGaps,
	"verify":   cmdVerify,
	"void":     cmdVoid,
	"prune":    cmdPrune,
	"keygen":   cmdKeygen,
	"health":   cmdHealth,
	"ddl":      cmdDDL,
	"version":  cmdVersion,
}

// run runs sn with args (without the program name) and returns its exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx := context.Background()
	// With SIGPIPE notified, a write to a closed pipe returns EPIPE instead
	// of killing the process, so the stores are closed properly.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)

	// sn reports Redis errors itself; go-redis would log each failed dial.
	redis.SetLogger(quiet{})

	e := &env{ctx: ctx, stdin: stdin, out: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr, tty: isTerminal(stderr)}
	err := dispatch(e, args)
	if ferr := e.out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	return report(e, err)
}

func dispatch(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("", "no command given")
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return cmdHelp(e, args)
	case "--version", "-version":
		return cmdVersion(e, args)
	}
	cmd, ok := commands[name]
	if !ok {
		if strings.HasPrefix(name, "-") {
			return usagef("", "flags go after the command, as in: sn next %s ...", name)
		}
		if name == "check" {
			return usagef("", "unknown command %q: sn validate checks numbers (as Generator.Validate and POST .../validate do)", name)
		}
		if best := parser.Closest(name, slices.Sorted(maps.Keys(commands))); best != "" {
			return usagef("", "unknown command %q, did you mean %q?", name, best)
		}
		return usagef("", "unknown command %q", name)
	}
	return cmd(e, args)
}

// report prints err and returns the exit status for it.
func report(e *env, err error) int {
	var ue *usageError
	var ie *inputError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, syscall.EPIPE):
		return exitBrokenPipe
	case errors.Is(err, errInvalid), errors.Is(err, errUnexplained):
		return exitFail
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.As(err, &ue):
		prefix := "sn"
		if ue.cmd != "" {
			prefix += " " + ue.cmd
		}
		fmt.Fprintf(e.stderr, "%s: %s\n\n", prefix, ue.msg)
		if c, ok := help[ue.cmd]; ok {
			// The synopsis only: the message stays in sight.
			fmt.Fprintf(e.stderr, "Usage: %s\nRun 'sn help %s' for the flags and examples.\n", c.synopsis, ue.cmd)
		} else {
			fmt.Fprintf(e.stderr, "Usage: sn COMMAND [flags] [arguments] (%s)\nRun 'sn help' for the commands and flags.\n", strings.Join(order, ", "))
		}
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintln(e.stderr, message(ie.err))
		return exitUsage
	}
	fmt.Fprintln(e.stderr, message(err))
	return exitFail
}

// message returns err's message with "sn: " before it, or before each
// error joined in it (errors.Join), so that each starts its own line.
func message(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		if strings.Join(msgs, "\n") == err.Error() { // a join, not an error that wraps several
			for i, e := range errs {
				msgs[i] = message(e)
			}
			return strings.Join(msgs, "\n")
		}
	}
	return snPrefix(err.Error())
}

// snPrefix starts msg with "sn: " unless it does already.
func snPrefix(msg string) string {
	if strings.HasPrefix(msg, "sn: ") {
		return msg
	}
	return "sn: " + msg
}

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
