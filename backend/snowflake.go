package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/etcdseq"
	"github.com/sngen/sn/sequence/redisseq"
	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// snowflakeDriver is the snowflake backend: time-ordered ids
// (sequence/snowflake) in the sequence's layout, with a worker id leased
// from the Redis at its url (redisseq.NewLeaser), or, without a url, from
// its ledger's database (sqlseq.NewLeaser), or, in one process alone,
// fixed by worker. The templates of a Build that have one layout and one
// Redis and prefix (or one fixed worker) share one Gen, and so one worker
// id: their ids never meet, whatever their counter keys.
type snowflakeDriver struct{}

// layouts are the presets a snowflake sequence's layout may name.
var layouts = map[string]snowflake.Layout{"twitter": snowflake.Twitter, "sonyflake": snowflake.Sonyflake}

// defaultLayout is the layout of a snowflake sequence that names none.
const defaultLayout = "twitter"

// layoutForms says what a layout may be, for errors.
const layoutForms = "twitter, sonyflake, or the bits of time, worker and sequence such as 41/10/12 with an epoch"

// Check checks the layout against the clock, and the worker or the URL the
// worker id is leased from; the store is the layout and the worker or the
// Redis and prefix.
func (snowflakeDriver) Check(t *config.Target) (config.StoreInfo, error) {
	st := config.StoreInfo{NoFloor: true, Fields: []string{"layout", "epoch", "unit", "worker", "single_process", "url", "prefix", "ledger", "table"}}
	s, err := decode(t)
	if err != nil {
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
		st.Fields = append(st.Fields, ledgerFields...)
		if err := checkLedger(s, "snowflake", true); err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return st, errors.Join(errs...)
		}
		st.Durable = true
		st.ID = ledgerLeaseKey(name, s, redactLedger(s.Ledger))
		return st, nil
	}
	st.Fields = append(st.Fields, "url", "prefix")
	if s.URL == "" {
		errs = append(errs, &config.Error{Field: "url", Err: errors.New("the snowflake backend leases its worker id from a Redis or a database: set url " +
			"(a Redis that runs with appendonly yes and appendfsync always) or ledger (" + ledgerForms + "), here or in store, " +
			"or a fixed worker with single_process: true")})
	} else if err := checkURL(s.URL, "snowflake"); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return st, errors.Join(errs...)
	}
	st.Durable = true
	st.ID = leaseKey(name, s, redact(s.URL))
	return st, nil
}

// Open shares one Gen among the Build's templates of one layout and one
// lease (or worker): its worker id is leased from the Redis at the URL,
// whose client the Build shares too.
func (snowflakeDriver) Open(ctx context.Context, t *config.Target) (sequence.Gen, error) {
	s, _ := decode(t) // Check accepted it
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
		store, err := openLedger(ctx, t)
		if err != nil {
			return nil, err
		}
		switch st := store.(type) {
		case *etcdseq.Store:
			leaser, err = etcdseq.NewLeaser(st, etcdseq.LeaserOptions{})
		case *sqlseq.Store:
			leaser, err = sqlseq.NewLeaser(st, sqlseq.LeaserOptions{})
		default:
			err = fmt.Errorf("backend: snowflake: the ledger %s cannot lease worker ids", redactLedger(s.Ledger))
		}
		if err != nil {
			return nil, err
		}
		key = ledgerLeaseKey(name, s, s.Ledger)
	} else {
		c, err := connect(ctx, t)
		if err != nil {
			return nil, err
		}
		if leaser, err = redisseq.NewLeaser(c, redisseq.LeaserOptions{Prefix: s.Prefix}); err != nil {
			return nil, err
		}
		key = leaseKey(name, s, s.URL)
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

// leaseKey is the store ID (with the URL redacted) and the config.Share
// key (with the URL as it is) of a snowflake sequence of layout name whose
// worker id is leased.
func leaseKey(name string, s seq, url string) string {
	prefix := s.Prefix
	if prefix == "" {
		prefix = redisseq.DefaultPrefix
	}
	return fmt.Sprintf("snowflake %s lease %s prefix %q", name, url, prefix)
}

// ledgerLeaseKey is leaseKey for a worker id leased from the ledger's
// database (sqlseq.NewLeaser), whose URL is ledger.
func ledgerLeaseKey(name string, s seq, ledger string) string {
	return fmt.Sprintf("snowflake %s lease ledger %s table %s", name, ledger, tableOf(s))
}

// sharedGen holds a Gen that several templates share. It is not an
// io.Closer: the Set closes the Gen itself, once, as one of its sequences,
// before the Redis client it leases through.
type sharedGen struct{ g *snowflake.Gen }

// parseLayout returns the layout of s at the instant now, its name as a
// store ID spells it ("twitter", "41/10/12 unit 1ms epoch 2024-01-01T00:00:00Z"),
// and whether it is explicit bits, which read the epoch and the unit.
func parseLayout(s seq, now time.Time) (l snowflake.Layout, name string, explicit bool, errs []error) {
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
		presets := slices.Sorted(func(yield func(string) bool) {
			for k := range layouts {
				if !yield(k) {
					return
				}
			}
		})
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
