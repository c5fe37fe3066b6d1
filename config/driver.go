package config

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sngen/sn/parser"

	"github.com/sngen/sn/sequence"
)

// A Driver opens the sequences of one backend, the one a [Sequence]'s
// Backend names. Drivers are registered with [Register], usually in the
// init function of the package that implements them.
//
// A Driver keeps no state of its own between calls: what it opens for a
// Build it shares between that Build's templates with [Share], and the
// Build's Set closes it. A store file is named by [Target.File], and a
// store that is a sequence.Allocator is served by [Serve], so that every
// driver reads the steps of a Segment and WithExact alike. Its methods may be called concurrently by
// different Builds; one Build calls them from one goroutine.
type Driver interface {
	// Check checks t.Sequence, the effective sequence of template t.Name,
	// without opening anything, and describes its store. It reports each
	// problem as a *[Error] whose Field is the field at fault, such as
	// "path" for a missing file, joined with errors.Join when there are
	// several. Check returns the StoreInfo's Fields even when it returns an
	// error, so that a template's other mistakes are reported with it.
	Check(t *Target) (StoreInfo, error)

	// Open opens the sequence of template t.Name, which Check accepted,
	// and returns it. A store that several templates use (a file, a
	// client) is opened once per Build with [Share]. The Gen is closed by
	// [Set.Close], before what was shared, if it is an io.Closer. Open
	// honours ctx's cancellation and deadline.
	Open(ctx context.Context, t *Target) (sequence.Gen, error)
}

// StoreInfo describes where a template's numbers are kept, as a [Driver]'s
// Check finds it.
type StoreInfo struct {
	// ID identifies the store and the keyspace in it: two templates whose
	// IDs are equal share their counters (a counter key names one counter
	// in it), two whose IDs differ never do. It is written from the fields
	// that locate the store, resolved (an absolute path, the URL and the
	// key prefix, the ledger and its table), such as
	// "bolt /var/lib/sn/sn.db". An empty ID stands for a store of the
	// template's own, shared with no other template. When unsure, tell
	// two stores apart: templates in different stores must never print
	// one string, which [Config.Validate] proves.
	ID string

	// Durable is true when the numbers outlive the process: a new process
	// continues after the numbers an earlier one issued. It is false for
	// the memory backend.
	Durable bool

	// Fields lists the fields of [Sequence] that the backend reads, by
	// their names in a file ("path", "step"), besides "backend" and what
	// package config reads itself ("queued", "balanced"). A template's own
	// sequence that sets another field is refused. The list may depend on
	// the sequence (a fixed snowflake worker reads no url).
	Fields []string

	// NoFloor is true when the backend's sequences cannot raise a floor
	// (they are not sequence.Floorers), such as snowflake ids, which are
	// not drawn from a counter: [Config.Validate] then refuses a
	// template's floor instead of letting [Config.Build] fail on it.
	NoFloor bool

	// Gapless is true when the sequence the backend opens for the
	// target draws every number without a gap, one at a time, in a
	// transaction of its store ([sequence.Transactor],
	// [sequence.Continuous]): what a target whose profile demands an
	// unbroken series ([Target.Gapless]) needs. [Config.Validate] refuses
	// such a target whose StoreInfo does not say so.
	Gapless bool

	// Bits, when not 0, is how many low bits every number of the backend
	// fits in, such as a snowflake layout's 63. A member of a balanced
	// sequence of 2^n members needs n bits for its index beside its
	// numbers: [Config.Validate] refuses a member with Bits above 63-n.
	// 0 means numbers that start at 1 and are counted, and fit as long as
	// the counter is below 2^(63-n).
	Bits int
}

// Target is one template's sequence, as a [Driver]'s Check and Open see
// it.
type Target struct {
	// Name is the template's name in the [Config].
	Name string

	// Sequence is the template's effective sequence ([Config.Sequence]):
	// the store's settings with those the template sets replaced.
	Sequence Sequence

	// Dir is the directory a relative path is resolved against, "" for the
	// current directory. See [WithDir].
	Dir string

	// Tenant is the template's tenant ([Template.Tenant]), "" for none:
	// a backend that keeps one store per Build for every template (the
	// memory backend) keeps one per tenant instead.
	Tenant string

	// Profile is the template's legal profile ([Template.Profile]), ""
	// for none. A backend whose store can draw every number without a
	// gap (sql) opens a gapless sequence for a target whose profile
	// demands one ([Target.Gapless]) and says so in [StoreInfo].Gapless;
	// the others ignore it, and the template is refused.
	Profile string

	// Exact asks for a sequence that reserves in its store exactly the
	// numbers each call asks for, instead of blocks of them. See
	// [WithExact].
	Exact bool

	// LockWait is how long to wait for a store file that another process
	// holds: 0 for the driver's default, negative to try once. See
	// [WithLockWait].
	LockWait time.Duration

	shares *shares // the Build's; nil in Check
}

// Gapless reports whether t's profile demands an unbroken series
// ("gapless", "fr-continuous"): the driver opens a sequence that draws
// each number in a transaction, never from a block, if it can.
func (t *Target) Gapless() bool { return t.Profile == "gapless" || t.Profile == "fr-continuous" }

// Abs returns path resolved against t.Dir, as an absolute path.
func (t *Target) Abs(path string) (string, error) {
	if !filepath.IsAbs(path) && t.Dir != "" {
		path = filepath.Join(t.Dir, path)
	}
	return filepath.Abs(path)
}

// Share returns what open returns, opening it once per Build: the first
// template of a Build that asks for key calls open, the others get the
// same value. [Set.Close] closes it, if it is an io.Closer, after the
// Set's sequences; so does a Build that fails.
//
// Keys are shared by every driver: start them with the kind of store
// ("bolt /var/lib/sn/sn.db"), so that two backends that use one store (as
// bolt and redis-strict share a bolt file) share it, and others do not
// collide. Share may be called only from a Driver's Open.
func Share[T any](t *Target, key string, open func() (T, error)) (T, error) {
	var zero T
	if t.shares == nil {
		return zero, fmt.Errorf("config: Share %q outside Build", key)
	}
	if v, ok := t.shares.vals[key]; ok {
		tv, ok := v.(T)
		if !ok {
			return zero, fmt.Errorf("config: Share %q: the key holds a value of type %T, not %v", key, v, reflect.TypeFor[T]())
		}
		return tv, nil
	}
	v, err := open()
	if err != nil {
		return zero, err
	}
	t.shares.keys = append(t.shares.keys, key)
	t.shares.vals[key] = v
	return v, nil
}

// shares is what the drivers opened for one Build, by key.
type shares struct {
	keys []string // in opening order
	vals map[string]any
}

// close closes, in the reverse order of opening, every value that is an
// io.Closer.
func (s *shares) close() []error {
	var errs []error
	for i := len(s.keys) - 1; i >= 0; i-- {
		if c, ok := s.vals[s.keys[i]].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errs
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a driver available under name, the value of a
// [Sequence]'s Backend. It panics if d is nil, if name is taken, or if
// name is not made of letters, digits, "-" and "_": those are mistakes of
// the program, made in an init function.
func Register(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("config: Register driver " + name + " is nil")
	}
	if !validBackend(name) {
		panic(fmt.Sprintf("config: Register driver %q: a name is made of letters, digits, \"-\" and \"_\"", name))
	}
	if _, dup := drivers[name]; dup {
		panic("config: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers returns the sorted names of the registered drivers.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the driver registered under name. For a name that is
// not registered, it returns an error that lists the registered ones and
// suggests the closest.
func Lookup(name string) (Driver, error) {
	if d := lookup(name); d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("config: backend %q: %s", name, unknown(name))
}

func lookup(name string) Driver {
	driversMu.RLock()
	defer driversMu.RUnlock()
	return drivers[name]
}

func validBackend(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// elsewhere names the packages whose drivers are well known, by backend.
var elsewhere = map[string]string{
	"bolt":         "github.com/sngen/sn/backend/bolt",
	"sql":          "github.com/sngen/sn/backend/sql",
	"etcd":         "github.com/sngen/sn/backend/etcd",
	"redis":        "github.com/sngen/sn/backend/redis",
	"redis-strict": "github.com/sngen/sn/backend/redis/strict",
	"snowflake":    "github.com/sngen/sn/backend/snowflake",
	"sqlite":       "github.com/sngen/sn/backend/sqlite",
}

// databases are backend names that people write for a database that is
// the sql backend's ledger, with the form of its ledger URL.
var databases = map[string]string{
	"postgres":   "postgres://user:password@host:5432/db",
	"postgresql": "postgres://user:password@host:5432/db",
	"pg":         "postgres://user:password@host:5432/db",
	"mysql":      "mysql://user:password@host:3306/db",
	"mariadb":    "mysql://user:password@host:3306/db",
}

// unknown says that no driver is registered under name: which are, the
// package to import for a well-known backend, how to name a database, or
// the closest name.
func unknown(name string) string {
	names := Drivers()
	list := strings.Join(names, ", ")
	if pkg, ok := elsewhere[name]; ok {
		return fmt.Sprintf("unknown (want %s; import _ %q for %s)", list, pkg, name)
	}
	if ledger, ok := databases[strings.ToLower(name)]; ok {
		sql := "backend: sql"
		if !slices.Contains(names, "sql") {
			sql = fmt.Sprintf("backend: sql (import _ %q)", elsewhere["sql"])
		}
		return fmt.Sprintf("unknown (want %s; for %s, set %s and ledger: %s)", list, name, sql, ledger)
	}
	// The closest name may be a well-known backend whose package is not
	// linked: "rdis" is "redis", and backend/redis is to be imported.
	known := slices.Concat(names, slices.Collect(maps.Keys(elsewhere)))
	slices.Sort(known)
	best := parser.Closest(strings.ToLower(name), slices.Compact(known))
	if slices.Contains(known, strings.ToLower(name)) {
		best = strings.ToLower(name)
	}
	switch {
	case best == "":
		return fmt.Sprintf("unknown (want %s)", list)
	case !slices.Contains(names, best):
		return fmt.Sprintf("unknown, did you mean %q? (want %s; import _ %q for %s)", best, list, elsewhere[best], best)
	}
	return fmt.Sprintf("unknown, did you mean %q? (want %s)", best, list)
}
