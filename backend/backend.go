// Package backend opens the sequences that an sn.Config declares: the bolt,
// redis and redis-strict backends, which package sn leaves to an
// sn.Opener so that a program using only memory sequences never links a
// database driver.
//
//	cfg, err := sn.LoadConfig("sn.yaml")
//	if err != nil { ... }
//	open := backend.New(backend.Options{Dir: "/var/lib/myapp"})
//	defer open.Close()
//	set, err := cfg.Build(ctx, open.Open)
//	if err != nil { ... }
//	defer set.Close()
//	orders, _ := set.Get("orders")
//
// An [Opener] opens each bolt file once and connects to each Redis URL once,
// however many templates use them, and wraps each template's allocator in a
// sequence.Segment with the template's steps (or, under [Options.Exact],
// reserves exactly what each call asks for). A redis-strict sequence is
// redisseq's strict Counter, refilled from the bolt file at its path. A file
// or client is closed
// when the last template using it is released by sn.Set.Close, or by
// [Opener.Close].
//
// # Redis URLs
//
// The url of a redis or redis-strict sequence takes these forms:
//
//	redis://[user:password@]host:port[/db][?option=value...]   one server
//	rediss://...                                                one server over TLS
//	unix:///path/to/redis.sock[?db=N]                           one server on a Unix socket
//	redis+cluster://host1:port1,host2:port2[?option=value...]   a Redis Cluster
//	rediss+cluster://...                                        a Redis Cluster over TLS
//
// The options are those of go-redis's ParseURL and ParseClusterURL
// (dial_timeout=3s, pool_size=10, ...). A cluster URL lists its seed nodes
// separated by commas (or as addr= options); the client discovers the rest.
package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/boltseq"
)

// Options configures an [Opener]. The zero value is ready to use.
type Options struct {
	// Dir is the directory that a relative bolt path is resolved against.
	// A program that reads a config file usually passes the file's
	// directory.
	// default: the current directory.
	Dir string

	// Bolt configures the opening of bolt files: how long to wait for a
	// file another process has open, and the mode of a new file.
	// default: nil, boltseq's defaults.
	Bolt *boltseq.Options

	// Exact makes the bolt and redis backends reserve exactly the numbers
	// each call asks for (one store call per Next, one per NextN) instead
	// of serving them from blocks through a sequence.Segment. A program
	// that issues a few numbers and exits leaves no gap that way, at the
	// cost of a store call per request; the sn command sets it. The step
	// settings are then unused; fetch_timeout bounds each call.
	// default: false, segments.
	Exact bool
}

// Opener opens sequences for sn.Config.Build: pass its [Opener.Open]
// method as the sn.Opener. It is safe for concurrent use.
type Opener struct {
	opts Options
	mem  *sequence.Memory

	mu      sync.Mutex
	closed  bool
	bolts   map[string]*shared[*boltseq.Store] // by absolute path
	redises map[string]*shared[redisClient]    // by URL
	segs    []*sequence.Segment
}

// shared is a store or client used by several sequences, closed when the
// last of them is released.
type shared[T io.Closer] struct {
	v    T
	refs int
}

// New returns an Opener with the given options.
func New(opts Options) *Opener {
	return &Opener{
		opts:    opts,
		mem:     sequence.NewMemory(),
		bolts:   map[string]*shared[*boltseq.Store]{},
		redises: map[string]*shared[redisClient]{},
	}
}

// ErrClosed is returned by [Opener.Open] after [Opener.Close].
var ErrClosed = errors.New("backend: opener closed")

// Open opens the sequence of the template named name as sc says. Its
// signature is that of sn.Opener. The io.Closer it returns releases the
// template's share of the bolt file or Redis client; the Gen, when it is a
// sequence.Segment, is closed by its owner (sn.Set.Close closes both).
//
// The memory backend gives one sequence.Memory shared by every template
// opened through this Opener.
func (o *Opener) Open(ctx context.Context, name string, sc sn.SequenceConfig) (sequence.Gen, io.Closer, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, nil, ErrClosed
	}
	segOpts, err := sc.SegmentOptions()
	if err != nil {
		return nil, nil, fmt.Errorf("backend: %w", err)
	}
	timeout := segOpts.FetchTimeout
	if timeout <= 0 {
		timeout = defaultFetchTimeout
	}
	switch sc.Backend {
	case sn.BackendMemory, "":
		return o.mem, nil, nil
	case sn.BackendBolt:
		store, release, err := o.bolt(sc.Path)
		if err != nil {
			return nil, nil, err
		}
		return o.gen(store, segOpts, timeout), release, nil
	case sn.BackendRedis:
		c, release, err := o.redis(ctx, sc.URL, timeout)
		if err != nil {
			return nil, nil, err
		}
		return o.gen(c.allocator(sc), segOpts, timeout), release, nil
	case sn.BackendRedisStrict:
		store, releaseStore, err := o.bolt(sc.Path)
		if err != nil {
			return nil, nil, err
		}
		c, releaseRedis, err := o.redis(ctx, sc.URL, timeout)
		if err != nil {
			releaseStore.closeLocked()
			return nil, nil, err
		}
		release := releasers{releaseRedis, releaseStore}
		return c.counter(store, sc), release, nil
	}
	return nil, nil, fmt.Errorf("backend: unknown backend %q (want %s, %s, %s or %s)", sc.Backend,
		sn.BackendMemory, sn.BackendBolt, sn.BackendRedis, sn.BackendRedisStrict)
}

// defaultFetchTimeout is the default of SequenceConfig.FetchTimeout, as in
// sequence.SegmentOptions: it also bounds the first PING of a Redis client.
const defaultFetchTimeout = 5 * time.Second

// gen wraps a in a Segment, or in an exact Gen under Options.Exact; o.mu
// is held.
func (o *Opener) gen(a sequence.Allocator, opts sequence.SegmentOptions, timeout time.Duration) sequence.Gen {
	if o.opts.Exact {
		return exact{a, timeout}
	}
	s := sequence.NewSegment(a, opts)
	o.segs = append(o.segs, s)
	return s
}

// bolt opens the bolt file at path, or shares the one already open; o.mu
// is held.
func (o *Opener) bolt(path string) (*boltseq.Store, *lease, error) {
	if path == "" {
		return nil, nil, errors.New("backend: bolt: no path")
	}
	if !filepath.IsAbs(path) && o.opts.Dir != "" {
		path = filepath.Join(o.opts.Dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("backend: bolt: %w", err)
	}
	sh := o.bolts[abs]
	if sh == nil {
		store, err := boltseq.Open(path, o.opts.Bolt)
		if err != nil {
			return nil, nil, err
		}
		sh = &shared[*boltseq.Store]{v: store}
		o.bolts[abs] = sh
	}
	sh.refs++
	return sh.v, &lease{o: o, drop: func() error { return dropShared(o.bolts, abs, sh) }}, nil
}

// dropShared drops one reference to sh, the value of m[key], and closes it
// with the last; o.mu is held.
func dropShared[T io.Closer](m map[string]*shared[T], key string, sh *shared[T]) error {
	sh.refs--
	if sh.refs > 0 || m[key] != sh {
		return nil // still in use, or already closed by Opener.Close
	}
	delete(m, key)
	return sh.v.Close()
}

// lease is one template's share of a store or client. Its drop function
// runs once, with o.mu held.
type lease struct {
	o    *Opener
	once sync.Once
	drop func() error
	err  error
}

// Close releases the share.
func (l *lease) Close() error {
	l.once.Do(func() {
		l.o.mu.Lock()
		defer l.o.mu.Unlock()
		l.err = l.drop()
	})
	return l.err
}

// closeLocked releases the share when o.mu is already held.
func (l *lease) closeLocked() error {
	l.once.Do(func() { l.err = l.drop() })
	return l.err
}

// releasers closes each of its Closers in turn.
type releasers []io.Closer

func (r releasers) Close() error {
	var errs []error
	for _, c := range r {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Close closes every Segment this Opener made (those already closed are
// skipped), then every bolt file and Redis client still open, whoever
// still uses them, and returns their errors joined. Later calls to Open
// return [ErrClosed]; later calls to Close return nil.
func (o *Opener) Close() error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	segs, bolts, redises := o.segs, o.bolts, o.redises
	o.segs, o.bolts, o.redises = nil, map[string]*shared[*boltseq.Store]{}, map[string]*shared[redisClient]{}
	o.mu.Unlock()

	var errs []error
	for _, s := range segs {
		if err := s.Close(); err != nil && !errors.Is(err, sequence.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, sh := range redises {
		errs = append(errs, sh.v.Close())
	}
	for _, sh := range bolts {
		errs = append(errs, sh.v.Close())
	}
	return errors.Join(errs...)
}

// exact is a Gen that reserves exactly what it is asked for from its
// Allocator, each call bounded by timeout; see Options.Exact.
type exact struct {
	a       sequence.Allocator
	timeout time.Duration
}

// Next reserves one number.
func (e exact) Next(ctx context.Context, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	r, err := e.a.Allocate(ctx, key, 1)
	if err != nil {
		return 0, err
	}
	return r.First, nil
}

// NextN reserves n numbers in one call to the Allocator.
func (e exact) NextN(ctx context.Context, key string, dst []int64, n int) ([]int64, error) {
	if n < 0 {
		return dst, fmt.Errorf("%w: NextN with n=%d", sequence.ErrInvalidArgument, n)
	}
	if n == 0 {
		return dst, nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	r, err := e.a.Allocate(ctx, key, int64(n))
	if err != nil {
		return dst, err
	}
	for v := r.First; v <= r.Last && v > 0; v++ {
		dst = append(dst, v)
	}
	return dst, nil
}

// Floor raises the Allocator's floor, when it has one.
func (e exact) Floor(ctx context.Context, key string, floor int64) error {
	fl, ok := e.a.(sequence.Floorer)
	if !ok {
		return fmt.Errorf("backend: %T is not a sequence.Floorer: %w", e.a, errors.ErrUnsupported)
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return fl.Floor(ctx, key, floor)
}
