// Package snowflake registers the "snowflake" backend of package
// github.com/sngen/sn/config: time-ordered ids (package
// sequence/snowflake) whose worker id is leased, so that two processes
// never issue one id. Import it for its side effect:
//
//	import _ "github.com/sngen/sn/backend/snowflake"
//
// A snowflake sequence reads layout: twitter (the default,
// bwmarrin/snowflake's), sonyflake (sonyflake v2's), or explicit bits of
// time, worker and sequence, "41/10/12", with an epoch (a date or an RFC
// 3339 instant, not in the future) and a unit (default 1ms). The layout
// must last ten more years.
//
// Its worker id is leased from one of:
//
//   - a ledger (the ledger field, with the fields of its kind, such as
//     table), which config.OpenLedger opens with the driver registered
//     for its scheme (backend/sql, backend/etcd);
//   - the store at url, with a prefix for its keys, opened by the
//     [Leasers] registered for the URL's scheme: backend/redis registers
//     Redis's, and that Redis must fsync every write (appendonly yes,
//     appendfsync always);
//   - a fixed worker, with single_process: true to say that one process
//     alone uses it (a test, a tool): every copy of a config file has the
//     same one, and two processes that use it repeat ids.
//
// The lease is renewed in the background, and each renewal records a
// bound that the next holder of the id issues after, so two processes
// never issue one id, even across a clock rollback. The templates of a
// Build with one layout and one lease share one Gen and so one lease,
// which the Set releases when it is closed. Snowflake ids are not
// counted: a template with a floor is refused, and a layout that takes
// all 63 bits (twitter, sonyflake) cannot be a balanced member, whose
// index needs low bits of its own.
package snowflake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

func init() { config.Register("snowflake", driver{}) }

// fields are a snowflake sequence's own fields.
type fields struct {
	// Layout, Epoch and Unit are the layout: "twitter" (the default),
	// "sonyflake", or the bits of time, worker and sequence written
	// "41/10/12" with the Epoch it counts time from (a date such as
	// 2024-01-01, not in the future) and the Unit of its time (a Go
	// duration of at least 1µs; default 1ms).
	Layout string `yaml:"layout"`
	Epoch  string `yaml:"epoch"`
	Unit   string `yaml:"unit"`

	// URL is the store the worker id is leased from, and Prefix the
	// prefix of its keys there.
	URL    string `yaml:"url"`
	Prefix string `yaml:"prefix"`

	// Ledger is the ledger the worker id is leased in, instead of URL.
	Ledger string `yaml:"ledger"`

	// Worker fixes the worker id instead of leasing one; it is refused
	// unless SingleProcess declares that one process alone issues with it,
	// and that its clock does not go back across a restart.
	Worker        *int64 `yaml:"worker"`
	SingleProcess bool   `yaml:"single_process"`
}

// Leasers lease worker ids in the stores whose URLs have one scheme, for
// the url field of a snowflake sequence. They are registered with
// [RegisterLeasers], as backend/redis registers Redis's.
type Leasers interface {
	// Check checks url, without opening anything, and returns the part
	// of a store ID that names the store and prefix, without a password.
	Check(t *config.Target, url, prefix string) (id string, err error)

	// Open returns a leaser of worker ids kept in the store at url under
	// prefix, which Check accepted, sharing what it opens in the Build
	// (config.Share).
	Open(ctx context.Context, t *config.Target, url, prefix string) (snowflake.Leaser, error)
}

var (
	leasersMu sync.RWMutex
	leasers   = map[string]Leasers{}
)

// RegisterLeasers makes l lease the worker ids of the snowflake sequences
// whose url has scheme. It panics if l is nil or the scheme is taken.
func RegisterLeasers(scheme string, l Leasers) {
	leasersMu.Lock()
	defer leasersMu.Unlock()
	if l == nil {
		panic("backend/snowflake: RegisterLeasers " + scheme + " is nil")
	}
	if _, dup := leasers[scheme]; dup {
		panic("backend/snowflake: RegisterLeasers called twice for scheme " + scheme)
	}
	leasers[scheme] = l
}

// leasersOf returns the Leasers of url's scheme, or an error that says
// what to import.
func leasersOf(url string) (Leasers, error) {
	scheme, _, _ := strings.Cut(url, "://")
	leasersMu.RLock()
	l := leasers[scheme]
	leasersMu.RUnlock()
	if l != nil {
		return l, nil
	}
	if strings.HasPrefix(scheme, "redis") || scheme == "unix" {
		return nil, fmt.Errorf("url %q: no lease driver for %s is linked: import _ %q", config.Redact(url), scheme, "github.com/sngen/sn/backend/redis")
	}
	leasersMu.RLock()
	schemes := slices.Sorted(maps.Keys(leasers))
	leasersMu.RUnlock()
	if len(schemes) == 0 {
		return nil, fmt.Errorf("url %q: want the URL of a Redis, such as redis://host:6379 (import _ %q)", config.Redact(url), "github.com/sngen/sn/backend/redis")
	}
	return nil, fmt.Errorf("url %q: unknown scheme %q (want %s)", config.Redact(url), scheme, strings.Join(schemes, ", "))
}

// driver is the snowflake backend: the templates of a Build that have
// one layout and one lease (or worker) share one Gen, and so one worker
// id: their ids never meet, whatever their counter keys.
type driver struct{}

// layouts are the presets a snowflake sequence's layout may name.
var layouts = map[string]snowflake.Layout{"twitter": snowflake.Twitter, "sonyflake": snowflake.Sonyflake}

// defaultLayout is the layout of a snowflake sequence that names none.
const defaultLayout = "twitter"

// layoutForms says what a layout may be, for errors.
const layoutForms = "twitter, sonyflake, or the bits of time, worker and sequence such as 41/10/12 with an epoch"

// Check checks the layout against the clock, and the worker or the store
// the worker id is leased from; the store is the layout and the worker or
// the lease's store.
func (driver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{NoFloor: true, Fields: []string{"layout", "epoch", "unit", "worker", "single_process", "url", "prefix", "ledger"}}
	var s fields
	if err := t.Decode(&s); err != nil {
		return st, err
	}
	st.Fields = []string{"layout"}
	l, name, explicit, errs := parseLayout(s, time.Now())
	if explicit {
		st.Fields = append(st.Fields, "epoch", "unit")
	}
	if len(errs) == 0 {
		st.Bits = l.TimeBits + l.WorkerBits + l.SeqBits
	}
	if s.Worker != nil {
		st.Fields = append(st.Fields, "worker", "single_process")
		w := *s.Worker
		switch {
		case len(errs) == 0 && (w < 0 || w >= l.Workers()):
			errs = append(errs, &config.Error{Field: "worker", Err: fmt.Errorf("worker %d: the %s layout has %d bits of worker, so 0 to %d", w, name, l.WorkerBits, l.Workers()-1)})
		case !s.SingleProcess:
			errs = append(errs, &config.Error{Field: "worker", Err: fmt.Errorf("worker %d: a fixed worker id repeats ids when two processes use it (two copies of this file, two runs at once) "+
				"or when a process restarts after the clock went back: set url to lease worker ids from a Redis, "+
				"or single_process: true if one process alone issues with this worker id (a test, a tool)", w)})
		}
		if len(errs) > 0 {
			return st, errors.Join(errs...)
		}
		st.ID = fmt.Sprintf("snowflake %s worker %d", name, w)
		return st, nil
	}
	if s.URL == "" && s.Ledger != "" {
		st.Fields = append(st.Fields, "ledger")
		info, err := config.CheckLedger(t, s.Ledger)
		st.Fields = append(st.Fields, info.Fields...)
		if err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return st, errors.Join(errs...)
		}
		st.Durable = true
		st.ID = fmt.Sprintf("snowflake %s lease %s", name, info.ID)
		return st, nil
	}
	st.Fields = append(st.Fields, "url", "prefix")
	var id string
	if s.URL == "" {
		errs = append(errs, &config.Error{Field: "url", Err: errors.New("the snowflake backend leases its worker id from a Redis or a database: set url " +
			"(a Redis that runs with appendonly yes and appendfsync always) or ledger (" + config.LedgerForms() + "), here or in store, " +
			"or a fixed worker with single_process: true")})
	} else if ls, err := leasersOf(s.URL); err != nil {
		errs = append(errs, &config.Error{Field: "url", Err: err})
	} else if id, err = ls.Check(t, s.URL, s.Prefix); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return st, errors.Join(errs...)
	}
	st.Durable = true
	st.ID = fmt.Sprintf("snowflake %s lease %s", name, id)
	return st, nil
}

// Open shares one Gen among the Build's templates of one layout and one
// lease (or worker).
func (driver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	var s fields
	t.Decode(&s) // Check accepted it
	l, name, _, errs := parseLayout(s, time.Now())
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if s.Worker != nil {
		key := fmt.Sprintf("snowflake %s worker %d", name, *s.Worker)
		sg, err := config.Share(t, key, func() (sharedGen, error) {
			g, err := snowflake.New(ctx, l, snowflake.Options{Worker: *s.Worker})
			return sharedGen{g}, err
		})
		if err != nil {
			return nil, err
		}
		return sg.g, nil
	}
	var leaser snowflake.Leaser
	var key string
	if s.URL == "" {
		ledger, err := config.OpenLedger(ctx, t, s.Ledger)
		if err != nil {
			return nil, err
		}
		if leaser, err = ledger.Leaser(); err != nil {
			return nil, err
		}
		info, _ := config.CheckLedger(t, s.Ledger)
		key = fmt.Sprintf("snowflake %s lease %s from %s", name, info.ID, s.Ledger)
	} else {
		ls, err := leasersOf(s.URL)
		if err != nil {
			return nil, err
		}
		if leaser, err = ls.Open(ctx, t, s.URL, s.Prefix); err != nil {
			return nil, err
		}
		id, _ := ls.Check(t, s.URL, s.Prefix)
		key = fmt.Sprintf("snowflake %s lease %s from %s", name, id, s.URL)
	}
	sg, err := config.Share(t, key, func() (sharedGen, error) {
		g, err := snowflake.New(ctx, l, snowflake.Options{Leaser: leaser})
		if errors.Is(err, snowflake.ErrLayout) {
			err = fmt.Errorf("%w (in a config, another layout needs its own prefix, or its own table on a ledger)", err)
		}
		return sharedGen{g}, err
	})
	if err != nil {
		return nil, err
	}
	return sg.g, nil
}

// sharedGen holds a Gen that several templates share. It is not an
// io.Closer: the Set closes the Gen itself, once, as one of its sequences,
// before the Redis client it leases through.
type sharedGen struct{ g *snowflake.Gen }

// parseLayout returns the layout of s at the instant now, its name as a
// store ID spells it ("twitter", "41/10/12 unit 1ms epoch 2024-01-01T00:00:00Z"),
// and whether it is explicit bits, which read the epoch and the unit.
func parseLayout(s fields, now time.Time) (l snowflake.Layout, name string, explicit bool, errs []error) {
	name = s.Layout
	if name == "" {
		name = defaultLayout
	}
	if preset, ok := layouts[name]; ok {
		return preset, name, false, nil
	}
	bad := func(field string, format string, a ...any) {
		errs = append(errs, &config.Error{Field: field, Err: fmt.Errorf(format, a...)})
	}
	parts := strings.Split(name, "/")
	bits := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			bits = nil
			break
		}
		bits[i] = n
	}
	if len(bits) != 3 {
		presets := slices.Sorted(maps.Keys(layouts))
		if best := parser.Closest(strings.ToLower(name), presets); best != "" {
			bad("layout", "layout %q: unknown, did you mean %q? (want %s)", s.Layout, best, layoutForms)
		} else {
			bad("layout", "layout %q: unknown (want %s)", s.Layout, layoutForms)
		}
		return l, name, false, errs
	}
	l = snowflake.Layout{TimeBits: bits[0], WorkerBits: bits[1], SeqBits: bits[2], Unit: time.Millisecond}
	if s.Unit != "" {
		d, err := time.ParseDuration(s.Unit)
		if err != nil || d < time.Microsecond {
			bad("unit", "unit %q: want a duration of at least 1µs, such as \"1ms\" or \"10ms\"", s.Unit)
		}
		l.Unit = d
	}
	switch e, err := parseEpoch(s.Epoch); {
	case s.Epoch == "":
		bad("epoch", "layout %s needs an epoch, the instant its time counts from, such as 2024-01-01: the day the system goes live", name)
	case err != nil:
		bad("epoch", "epoch %q: want a date such as 2024-01-01 or an instant such as 2024-01-01T00:00:00Z", s.Epoch)
	case e.After(now):
		bad("epoch", "epoch %q: in the future; the time of an id counts from the epoch", s.Epoch)
	default:
		l.Epoch = e
	}
	if len(errs) > 0 {
		return l, name, true, errs
	}
	if err := l.Validate(now); err != nil {
		bad("layout", "layout %q: %w", s.Layout, err)
		return l, name, true, errs
	}
	return l, fmt.Sprintf("%s unit %v epoch %s", name, l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano)), true, nil
}

// parseEpoch reads a date (UTC) or an RFC 3339 instant.
func parseEpoch(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
