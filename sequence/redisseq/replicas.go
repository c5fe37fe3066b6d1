package redisseq

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultReplicaTimeout is how long a write waits for its replicas when the
// options ask for replicas but give no timeout.
const DefaultReplicaTimeout = time.Second

// replicas makes writes wait until n replicas have them (Redis's WAIT),
// in the same round trip as the write. Redis replicates asynchronously: a
// failover to a replica that had not received the last writes would move a
// counter back, and numbers issued just before would be issued again. A
// number this package returns after WAIT confirmed n replicas survives the
// failover to any of those replicas.
type replicas struct {
	n       int
	timeout time.Duration
}

func newReplicas(n int, timeout time.Duration) replicas {
	if n < 0 {
		n = 0
	}
	if timeout < time.Millisecond {
		timeout = DefaultReplicaTimeout
	}
	return replicas{n: n, timeout: timeout}
}

// notReplicated is the cause of an error for a write that fewer replicas
// than asked for acknowledged in time. The write happened on the master;
// what it reserved or issued is not used.
type notReplicated struct{ got, want int64 }

func (e notReplicated) Error() string {
	return fmt.Sprintf("the write reached %d of the %d replicas asked for in time", e.got, e.want)
}

// pipeline returns a pipeline to the master that serves key: on a Redis
// Cluster WAIT must go to that node, not to any node.
func (r replicas) pipeline(ctx context.Context, rdb redis.UniversalClient, key string) (redis.Pipeliner, error) {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, err
		}
		return node.Pipeline(), nil
	}
	return rdb.Pipeline(), nil
}

// wait queues WAIT on p. go-redis pipelines have a Wait method that also
// stretches the read timeout by the wait, but the Pipeliner interface
// lacks it.
func (r replicas) wait(ctx context.Context, p redis.Pipeliner) *redis.IntCmd {
	if w, ok := p.(interface {
		Wait(context.Context, int, time.Duration) *redis.IntCmd
	}); ok {
		return w.Wait(ctx, r.n, r.timeout)
	}
	cmd := redis.NewIntCmd(ctx, "wait", r.n, r.timeout.Milliseconds())
	p.Process(ctx, cmd)
	return cmd
}

// check sets cmd's error if WAIT failed or fell short.
func (r replicas) check(cmd interface{ SetErr(error) }, wait *redis.IntCmd) {
	if err := wait.Err(); err != nil {
		cmd.SetErr(err)
	} else if got := wait.Val(); got < int64(r.n) {
		cmd.SetErr(notReplicated{got: got, want: int64(r.n)})
	}
}

// script runs s on key like s.Run and then, if replicas are asked for,
// waits for them in the same round trip. NOSCRIPT is handled as Run does.
func (r replicas) script(ctx context.Context, rdb redis.UniversalClient, s *redis.Script, key string, args ...any) *redis.Cmd {
	return r.scriptKeys(ctx, rdb, s, []string{key}, args...)
}

// scriptKeys is script for a script of several keys, all in the hash slot
// of the first.
func (r replicas) scriptKeys(ctx context.Context, rdb redis.UniversalClient, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	key := keys[0]
	if r.n == 0 {
		return s.Run(ctx, rdb, keys, args...)
	}
	var cmd *redis.Cmd
	for _, eval := range []bool{false, true} {
		p, err := r.pipeline(ctx, rdb, key)
		if err != nil {
			cmd = redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		if eval {
			cmd = s.Eval(ctx, p, keys, args...)
		} else {
			cmd = s.EvalSha(ctx, p, keys, args...)
		}
		wait := r.wait(ctx, p)
		p.Exec(ctx) // the errors are on the commands
		if !eval && redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			continue // nothing ran; again with the source
		}
		if cmd.Err() == nil {
			r.check(cmd, wait)
		}
		break
	}
	return cmd
}

// scriptOnce is script for a write that must reach Redis at most once.
// go-redis sends a command again when it loses the reply (a dropped
// connection, a read timeout), although Redis may have run it; if Redis
// restarted empty in between, a second range install would bring back a
// range whose numbers were already issued. So the script is sent as a
// command that go-redis does not retry, and a lost reply is an error.
func (r replicas) scriptOnce(ctx context.Context, rdb redis.UniversalClient, s *redis.Script, key string, args ...any) *redis.Cmd {
	var cmd *redis.Cmd
	for _, load := range []bool{false, true} {
		if load {
			// Loading a script changes no data, so it may be retried.
			if err := s.Load(ctx, rdb).Err(); err != nil {
				cmd.SetErr(err)
				return cmd
			}
		}
		cmd = redis.NewCmd(ctx, append([]any{"evalsha", s.Hash(), 1, key}, args...)...)
		if r.n == 0 {
			_ = rdb.Process(ctx, sendOnce{cmd})
		} else {
			p, err := r.pipeline(ctx, rdb, key)
			if err != nil {
				cmd.SetErr(err)
				return cmd
			}
			_ = p.Process(ctx, sendOnce{cmd})
			wait := r.wait(ctx, p)
			p.Exec(ctx) // the errors are on the commands
			if cmd.Err() == nil {
				r.check(cmd, wait)
			}
		}
		if !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			break // NOSCRIPT: nothing ran; load the script and send it again
		}
	}
	return cmd
}

// sendOnce is a command go-redis does not send again once it may have
// reached Redis.
type sendOnce struct{ *redis.Cmd }

func (sendOnce) NoRetry() bool { return true }
