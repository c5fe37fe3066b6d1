package redisseq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/sngen/sn/sequence"
)

// replyErr is an error reply from a server, as go-redis reports it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

var _ redis.Error = replyErr("")

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name  string
		err   error
		kinds []error // wrapped, besides err itself
		not   []error // not wrapped
		msg   string  // the exact message
	}{
		{"cancelled", context.Canceled, nil, []error{sequence.ErrUnavailable},
			"redisseq: Next key sn:{k}: context canceled"},
		{"deadline", fmt.Errorf("redis: %w", context.DeadlineExceeded), []error{sequence.ErrUnavailable, context.DeadlineExceeded}, nil,
			"redisseq: Next key sn:{k}: Redis did not answer in time: redis: context deadline exceeded"},
		{"refused", refused, []error{sequence.ErrUnavailable, syscall.ECONNREFUSED}, nil,
			"redisseq: Next key sn:{k}: Redis unreachable: dial tcp: connection refused"},
		{"dropped", io.EOF, []error{sequence.ErrUnavailable}, nil,
			"redisseq: Next key sn:{k}: Redis unreachable: EOF"},
		{"i/o timeout", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}, []error{sequence.ErrUnavailable}, nil,
			"redisseq: Next key sn:{k}: Redis unreachable: read tcp: i/o timeout"},
		{"pool timeout", redis.ErrPoolTimeout, []error{sequence.ErrUnavailable}, nil,
			"redisseq: Next key sn:{k}: Redis unreachable: redis: connection pool timeout"},
		{"closed client", redis.ErrClosed, []error{sequence.ErrClosed}, []error{sequence.ErrUnavailable},
			"redisseq: Next key sn:{k}: the Redis client is closed"},
		{"wrong type", replyErr("WRONGTYPE Operation against a key holding the wrong kind of value script: 1f0a, on @user_script:2."),
			[]error{ErrWrongType}, []error{sequence.ErrUnavailable},
			"redisseq: key sn:{k} holds a foreign value of the wrong type"},
		{"not an integer", replyErr("ERR value is not an integer or out of range"), []error{ErrCorrupt}, nil,
			"redisseq: key sn:{k} holds a corrupt value: value is not an integer or out of range"},
		{"hash value not an integer", replyErr("ERR hash value is not an integer script: 1f0a, on @user_script:9."), []error{ErrCorrupt}, nil,
			"redisseq: key sn:{k} holds a corrupt value: hash value is not an integer"},
		{"our corrupt reply", replyErr(`CORRUPT field left is "x"`), []error{ErrCorrupt}, nil,
			`redisseq: key sn:{k} holds a corrupt value: CORRUPT field left is "x"`},
		{"overflow", replyErr("ERR increment or decrement would overflow"), []error{sequence.ErrExhausted}, []error{ErrCorrupt},
			"redisseq: key sn:{k}: Next would pass 9223372036854775807"},
		{"moved", replyErr("MOVED 3999 127.0.0.1:6381"), []error{sequence.ErrUnavailable}, nil,
			"redisseq: Next key sn:{k}: Redis unavailable: MOVED 3999 127.0.0.1:6381"},
		{"ask", replyErr("ASK 3999 127.0.0.1:6381"), []error{sequence.ErrUnavailable}, nil, ""},
		{"tryagain", replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), []error{sequence.ErrUnavailable}, nil, ""},
		{"clusterdown", replyErr("CLUSTERDOWN The cluster is down"), []error{sequence.ErrUnavailable}, nil, ""},
		{"loading", replyErr("LOADING Redis is loading the dataset in memory"), []error{sequence.ErrUnavailable}, nil, ""},
		{"readonly", replyErr("READONLY You can't write against a read only replica."), []error{sequence.ErrUnavailable}, nil, ""},
		{"busy", replyErr("BUSY Redis is busy running a script."), []error{sequence.ErrUnavailable}, nil, ""},
		{"oom", replyErr("OOM command not allowed when used memory > 'maxmemory'."), []error{sequence.ErrUnavailable}, nil, ""},
		{"no permission", replyErr("NOPERM this user has no permissions to run the 'evalsha' command"), nil,
			[]error{sequence.ErrUnavailable, ErrCorrupt, ErrWrongType},
			"redisseq: Next key sn:{k}: NOPERM this user has no permissions to run the 'evalsha' command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify("Next", "sn:{k}", tt.err)
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%q) = %q does not wrap the cause", tt.err, got)
			}
			for _, k := range tt.kinds {
				if !errors.Is(got, k) {
					t.Errorf("classify(%q) = %q does not wrap %q", tt.err, got, k)
				}
			}
			for _, k := range tt.not {
				if errors.Is(got, k) {
					t.Errorf("classify(%q) = %q wraps %q", tt.err, got, k)
				}
			}
			if tt.msg != "" && got.Error() != tt.msg {
				t.Errorf("message = %q\n          want %q", got, tt.msg)
			}
			if !strings.HasPrefix(got.Error(), "redisseq: ") || !strings.Contains(got.Error(), "sn:{k}") {
				t.Errorf("message %q does not start with \"redisseq: \" and name the key", got)
			}
		})
	}
	if err := classify("Next", "sn:{k}", nil); err != nil {
		t.Errorf("classify(nil) = %v", err)
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain:key/1", "plain:key/1"},
		{"{", "%7B"},
		{"}", "%7D"},
		{"%", "%25"},
		{"%7B", "%257B"},
		{"a{b}c%d", "a%7Bb%7Dc%25d"},
	}
	for _, tt := range tests {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzEscape checks that escaping is injective and leaves no brace.
func FuzzEscape(f *testing.F) {
	f.Add("a", "b")
	f.Add("{", "%7B")
	f.Add("%7D", "}")
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := escape(a), escape(b)
		if strings.ContainsAny(ea, "{}") {
			t.Fatalf("escape(%q) = %q contains a brace", a, ea)
		}
		if a != b && ea == eb {
			t.Fatalf("escape(%q) == escape(%q) == %q", a, b, ea)
		}
	})
}
