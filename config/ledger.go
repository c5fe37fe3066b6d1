package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/snowflake"
)

// A Ledger is a store that several machines share and that keeps the
// record of every number handed out: a table in PostgreSQL or MySQL, an
// etcd cluster. A backend that serves numbers from in front of one (the
// redis backend, which reserves its ranges from it; redis-strict, which
// refills its counter from it; snowflake, which leases its worker id in
// it) takes it as a value from [OpenLedger], and never needs to know what
// keeps it: the driver registered for the URL's scheme opens it.
type Ledger interface {
	sequence.Allocator
	sequence.Floorer
	sequence.Pinger
	record.Holder

	// StoreID identifies the ledger and its keyspace, read from the store
	// itself, so that a store in front of it can tell when it is pointed
	// at another one.
	StoreID(ctx context.Context) (string, error)

	// Leaser returns a leaser of snowflake worker ids kept in the ledger.
	Leaser() (snowflake.Leaser, error)
}

// A LedgerDriver opens the ledgers whose URLs have one scheme. Ledger
// drivers are registered with [RegisterLedger], in the init function of
// the package that implements them, as backend/sql registers postgres and
// mysql. Like a [Driver], it keeps no state of its own between calls.
type LedgerDriver interface {
	// CheckLedger checks the ledger at url, the ledger field of template
	// t's sequence, and the fields that go with it (such as a table),
	// without opening anything. It returns the LedgerInfo's Fields even
	// when it returns an error. Called with url "", it returns the fields
	// alone.
	CheckLedger(t *Target, url string) (LedgerInfo, error)

	// OpenLedger opens the ledger at url, which CheckLedger accepted, once
	// per Build (with [Share]), within t's fetch timeout.
	OpenLedger(ctx context.Context, t *Target, url string) (Ledger, error)
}

// LedgerInfo describes a ledger, as a [LedgerDriver]'s CheckLedger finds
// it.
type LedgerInfo struct {
	// ID identifies the ledger and the keyspace in it, with no password,
	// as a part of a StoreInfo.ID: "ledger postgres://db/orders table
	// sn_ledger".
	ID string

	// Fields are the fields of a sequence that the ledger reads besides
	// "ledger", such as "table".
	Fields []string
}

var (
	ledgersMu sync.RWMutex
	ledgers   = map[string]LedgerDriver{}
)

// RegisterLedger makes a ledger driver available for the URLs of scheme
// (lower case, as "postgres"). It panics if d is nil or the scheme is
// taken: those are mistakes of the program, made in an init function.
func RegisterLedger(scheme string, d LedgerDriver) {
	ledgersMu.Lock()
	defer ledgersMu.Unlock()
	if d == nil {
		panic("config: RegisterLedger driver " + scheme + " is nil")
	}
	if scheme == "" || scheme != strings.ToLower(scheme) {
		panic(fmt.Sprintf("config: RegisterLedger scheme %q: want a lower-case URL scheme", scheme))
	}
	if _, dup := ledgers[scheme]; dup {
		panic("config: RegisterLedger called twice for scheme " + scheme)
	}
	ledgers[scheme] = d
}

// LedgerSchemes returns the sorted URL schemes of the registered ledger
// drivers.
func LedgerSchemes() []string {
	ledgersMu.RLock()
	defer ledgersMu.RUnlock()
	return slices.Sorted(maps.Keys(ledgers))
}

// ledgerPackages names the packages whose ledger drivers are well known,
// by scheme, and what else a program imports for them.
var ledgerPackages = map[string]string{
	"postgres":   `"github.com/sngen/sn/backend/sql" and a PostgreSQL driver, _ "github.com/jackc/pgx/v5/stdlib"`,
	"postgresql": `"github.com/sngen/sn/backend/sql" and a PostgreSQL driver, _ "github.com/jackc/pgx/v5/stdlib"`,
	"mysql":      `"github.com/sngen/sn/backend/sql" and the MySQL driver, _ "github.com/go-sql-driver/mysql"`,
	"etcd":       `"github.com/sngen/sn/backend/etcd"`,
	"etcds":      `"github.com/sngen/sn/backend/etcd"`,
}

// knownLedgerFields are the fields of the well-known ledger drivers, by
// scheme, accepted beside a ledger whose driver is not linked, so that its
// table is not also reported as a field nobody reads.
var knownLedgerFields = map[string][]string{
	"postgres":   {"table", "replication"},
	"postgresql": {"table", "replication"},
	"mysql":      {"table", "replication"},
}

// ledgerDriver returns the driver of url's scheme, or an *Error for the
// ledger field that says which package to import.
func ledgerDriver(url string) (LedgerDriver, error) {
	scheme, _, ok := strings.Cut(url, "://")
	if !ok {
		return nil, &Error{Field: "ledger", Err: fmt.Errorf("ledger %q: want a URL such as %s", Redact(url), ledgerForms)}
	}
	scheme = strings.ToLower(scheme)
	ledgersMu.RLock()
	d := ledgers[scheme]
	ledgersMu.RUnlock()
	if d != nil {
		return d, nil
	}
	if pkg, ok := ledgerPackages[scheme]; ok {
		return nil, &Error{Field: "ledger", Err: fmt.Errorf("ledger %q: no ledger driver for %s is linked: import _ %s", Redact(url), scheme, pkg)}
	}
	return nil, &Error{Field: "ledger", Err: fmt.Errorf("ledger %q: unknown scheme %q (want %s: %s)", Redact(url), scheme,
		strings.Join(slices.Sorted(maps.Keys(ledgerPackages)), ", "), ledgerForms)}
}

// ledgerForms shows the URLs a ledger takes, for error messages.
const ledgerForms = "postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379"

// LedgerForms returns the forms of the URLs a ledger takes, for a
// driver's error messages.
func LedgerForms() string { return ledgerForms }

// CheckLedger checks the ledger at url (the ledger field of t's sequence)
// with the driver registered for its scheme. For a scheme no driver is
// linked for, the *Error names the package to import.
//
// A backend whose ledger is optional calls it with url "" too: a field of
// a ledger's (a table) set without a ledger is then an *Error that says
// to set ledger. Without a driver, or without a ledger, the Fields are
// those of every registered ledger driver, so that a field beside the
// ledger is not reported as one the backend does not read.
func CheckLedger(t *Target, url string) (LedgerInfo, error) {
	if url != "" {
		d, err := ledgerDriver(url)
		if err != nil {
			scheme, _, _ := strings.Cut(strings.ToLower(url), "://")
			fields := ledgerFields(t)
			for _, f := range knownLedgerFields[scheme] {
				if !slices.Contains(fields, f) {
					fields = append(fields, f)
				}
			}
			return LedgerInfo{Fields: fields}, err
		}
		info, err := d.CheckLedger(t, url)
		// A field of another kind of ledger's (a SQL table beside an etcd
		// ledger) says so, instead of "not used".
		errs := []error{err}
		for _, f := range ledgerFields(t) {
			if v, set := t.Sequence.Options[f]; set && !slices.Contains(info.Fields, f) {
				info.Fields = append(slices.Clip(info.Fields), f)
				errs = append(errs, &Error{Field: f, Err: fmt.Errorf("%s %v: the ledger %s does not read it (another kind of ledger does)", f, v, Redact(url))})
			}
		}
		return info, errors.Join(errs...)
	}
	info := LedgerInfo{Fields: ledgerFields(t)}
	var errs []error
	for _, f := range info.Fields {
		if v, ok := t.Sequence.Options[f]; ok {
			errs = append(errs, &Error{Field: f, Err: fmt.Errorf("%s %v is a ledger's setting: set ledger too", f, v)})
		}
	}
	return info, errors.Join(errs...)
}

// ledgerFields returns the fields, besides ledger, of every registered
// ledger driver.
func ledgerFields(t *Target) []string {
	ledgersMu.RLock()
	drivers := slices.Collect(maps.Values(ledgers))
	ledgersMu.RUnlock()
	var all []string
	for _, d := range drivers {
		info, _ := d.CheckLedger(&Target{Name: t.Name}, "")
		for _, f := range info.Fields {
			if !slices.Contains(all, f) {
				all = append(all, f)
			}
		}
	}
	return all
}

// OpenLedger opens the ledger at url, which [CheckLedger] accepted, with
// the driver registered for its scheme: once per Build, however many
// templates name it.
func OpenLedger(ctx context.Context, t *Target, url string) (Ledger, error) {
	d, err := ledgerDriver(url)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.OpenLedger(ctx, t, url)
}

// FetchTimeout returns t's fetch_timeout, or sequence.DefaultFetchTimeout
// when it sets none: it also bounds what a driver does to open a store
// (the first PING of a client, creating a ledger's table).
func (t *Target) FetchTimeout() time.Duration {
	if d, err := time.ParseDuration(t.Sequence.FetchTimeout); err == nil && d > 0 {
		return d
	}
	return sequence.DefaultFetchTimeout
}

// Missing is the error of a required field left empty: field, which
// backend needs as what.
func Missing(field, backend, what string) error {
	return &Error{Field: field, Err: fmt.Errorf("the %s backend needs %s (set %s here or in store)", backend, what, field)}
}
