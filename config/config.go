// Package config reads the named templates of an application from a JSON
// or YAML file and builds their Generators, each drawing its numbers from
// the store its configuration names:
//
//	store:              # defaults for every template
//	  backend: bolt
//	  path: /var/lib/myapp/sn.db
//	  step: 100
//	templates:
//	  orders:
//	    template: "SN-@<seq, width=8>-@<checksum, algo=luhn>"
//	    floor: 20000    # continue above the old system's numbers
//	  tickets:
//	    template: "QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>"
//
// [Load] reads such a file, [Config.Validate] checks it without opening
// any store, and [Config.Build] opens the stores and returns a [Set] of
// Generators by name:
//
//	cfg, err := config.Load("sn.yaml")
//	if err != nil { ... }
//	set, err := cfg.Build(ctx, config.WithDir("/var/lib/myapp"))
//	if err != nil { ... }
//	defer set.Close()
//	orders, _ := set.Get("orders")
//
// Every error names the file, the line, the template and the field:
//
//	config: sn.yaml: line 9: template "orders": floor: want a whole number, found "4M"
//
// # Backends
//
// A sequence's backend names a [Driver], registered with [Register] in the
// manner of database/sql. Package config registers "memory", which counts
// in process memory (numbers restart with the process). The durable
// backends are in packages that register them when imported, one package
// per driver, each documenting its fields, so that a program links, and
// its go.mod requires, the clients of the stores it uses alone:
//
//	bolt           github.com/sngen/sn/backend/bolt          an embedded bbolt file
//	sqlite         github.com/sngen/sn/backend/sqlite        a SQLite file (a module of its own)
//	sql            github.com/sngen/sn/backend/sql           a ledger in PostgreSQL or MySQL (with the database/sql driver)
//	etcd           github.com/sngen/sn/backend/etcd          a ledger in an etcd cluster (a module of its own)
//	redis          github.com/sngen/sn/backend/redis         Redis in front of a ledger (a module of its own)
//	redis-strict   github.com/sngen/sn/backend/redis/strict  one Redis counter, refilled from a ledger (in redis's module)
//	snowflake      github.com/sngen/sn/backend/snowflake     time-ordered ids, the worker id leased
//
//	import _ "github.com/sngen/sn/backend/bolt"
//
// A backend named in a file whose package is not imported is refused with
// the import to add.
//
// Several machines share their numbers through a ledger, a PostgreSQL or
// MySQL table (or an etcd cluster) that records every number handed out:
// the sql backend issues from it alone, redis and redis-strict serve from
// Redis ranges reserved from it. A backend in front of a ledger takes it as
// a value ([Ledger], from [OpenLedger]), which the driver registered for
// the ledger URL's scheme ([RegisterLedger]) opens; this one needs
// backend/redis, backend/sql and github.com/jackc/pgx/v5/stdlib imported:
//
//	store:
//	  backend: redis
//	  url: redis://cache.internal:6379/0
//	  ledger: postgres://sn:secret@db.internal/orders
//	templates:
//	  orders:
//	    template: "SN-@<seq, width=8>"
//
// # Fields
//
// A sequence's fields are those of [Sequence], which every store has —
// backend, the steps of a sequence.Segment (step, min_step, max_step,
// prefetch, target, fetch_timeout, idle), queued and balanced — and the
// backend's own (path, url, ledger...), written beside them. Package
// config keeps the backend's own in [Sequence.Options]; the backend's
// [Driver] decodes them into a struct of its own with [Target.Decode] and
// says which fields it reads ([StoreInfo.Fields]). A template's sequence
// replaces the store's fields one by one. A field that the backend does
// not read is an error in a template's own sequence, and in the store when
// no template's backend reads it: a misspelt field is reported with a
// did-you-mean, not ignored.
//
// # Queues, balanced stores and snowflake ids
//
// Package config builds two combinators around any backend's sequence:
// queued puts a queue of numbers drawn ahead in front of it
// (sequence.Queued), and balanced spreads the numbers over 2, 4, 8...
// member stores taken in turn, number = value<<n | member
// (sequence.Balanced). Each member is the template's sequence with the
// member's fields replaced; with balanced, each member has its own queue.
// Package backend/snowflake registers the snowflake backend: time-ordered
// ids (sequence/snowflake) whose worker id is leased from a ledger or a
// Redis. This file needs backend/redis, backend/redis/strict, backend/sql
// with a PostgreSQL driver, and backend/snowflake imported:
//
//	templates:
//	  orders:
//	    template: "SN-@<seq>"
//	    sequence:
//	      backend: redis-strict
//	      ledger: postgres://sn:secret@db.internal/orders
//	      queued: {lead: 50ms}
//	      balanced:
//	        rescue: 30s
//	        members:
//	          - url: redis://cache-a.internal:6379/0
//	          - url: redis://cache-b.internal:6379/0
//	  shipments:
//	    template: "SH@<seq>"
//	    sequence: {backend: snowflake, layout: twitter, url: "redis://cache-a.internal:6379/0"}
//
// The store of a balanced sequence, for [Config.Validate]'s proof, is its
// members in order: over other members, or the same in another order, one
// value is another number. See [Balance] for what changing the members
// means for the numbers already issued.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/sequence"
)

// ErrInvalid is wrapped by every error that [Decode], [Load],
// [Config.Validate] and [Config.Build] return for a bad configuration;
// errors.As with a *[Error] says where.
var ErrInvalid = errors.New("config: invalid")

// Error reports a problem in a [Config]. Its message names the file and
// the line, when the Config was read from one, the template and the field:
//
//	config: sn.yaml: line 9: template "orders": sequence.backend "etcd": unknown (want bolt, etcd, memory, redis, redis-strict, snowflake, sql, sqlite)
//
// A [Driver]'s Check returns an Error whose Field is the field of the
// [Sequence] at fault ("path"); Build then names the template and the
// field as it is spelt in the file ("sequence.path").
type Error struct {
	// File is the path given to [Load], or "".
	File string
	// Line is the line of the offending field in the text that [Decode] or
	// [Load] read (when the field is not in the text, the line of the
	// nearest field around it, or the template's own), or 0 when unknown: a Config built in Go, a problem of the
	// whole file, a store that failed to open.
	Line int
	// Template is the name of the template at fault, or "" for the store
	// section and for the file as a whole.
	Template string
	// Field is the offending field, as spelt in the file ("template",
	// "floor", "sequence.step", "store.backend"), or "" when the problem is
	// not one field's (a syntax error, a store that failed to open).
	Field string
	// Err describes the problem. For a template that does not compile it
	// is the error of sn.New, which wraps sn.ErrTemplate.
	Err error
}

// Error returns "config: FILE: line N: template NAME: " followed by Err's
// message, leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Template != "" {
		fmt.Fprintf(&b, "template %q: ", e.Template)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns [ErrInvalid] and Err.
func (e *Error) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// Config declares named templates and where their numbers come from, as
// read from a JSON or YAML file by [Load] (see the package comment).
//
// Each template draws from the sequence "seq" ("@<seq, ...>" in its
// text). Templates whose sequences share a store and a counter key (the
// same ownerKey) share a counter. [Config.Build] turns a Config into a
// [Set] of Generators.
//
// A Config read by [Decode] or [Load] also remembers, in unexported fields,
// the file and the line of each field, so that the errors of
// [Config.Validate] and [Config.Build] say where the problem is (compare
// such Configs with go-cmp's cmpopts.IgnoreUnexported).
type Config struct {
	// Templates maps a name to a template. Names are made of letters,
	// digits, "_", "-" and ".".
	// default: none; a Config needs at least one template.
	Templates map[string]Template `json:"templates" yaml:"templates"`

	// Store is the sequence configuration of every template, field by
	// field, unless the template's own Sequence sets the field.
	// default: the memory backend.
	Store Sequence `json:"store" yaml:"store"`

	// Obfuscation maps the name of obfuscate=NAME to where its key is
	// (see sn.WithObfuscation). The key itself never goes in the file.
	// default: none.
	Obfuscation map[string]ObfuscationKey `json:"obfuscation,omitempty" yaml:"obfuscation,omitempty"`

	// Tenants are the teams whose templates one sn serve serves apart,
	// by name (letters, digits, "_", "-" and "."). A template names its
	// tenant (Template.Tenant); sn serve's tokens are each for one tenant,
	// and see nothing of another's. A tenant's templates keep their
	// numbers in stores of their own: Validate refuses a store (a file, a
	// table, a key prefix) that templates of two tenants share, so that
	// no tenant's numbers tell anything of another's, and proves that no
	// two templates print one string only within a tenant.
	// default: none; every template is of no tenant.
	Tenants map[string]Tenant `json:"tenants,omitempty" yaml:"tenants,omitempty"`

	// Serve holds the settings of the program that serves these templates
	// over HTTP, as written: sn serve's listen address, tokens and TLS
	// files, which package server decodes ([Config.DecodeServe] and
	// server.SettingsOf). Package config does not read them.
	// default: none.
	Serve Options `json:"serve,omitempty" yaml:"serve,omitempty"`

	src *source // where the Config was read from, or nil
}

// Tenant is one team of a [Config]'s Tenants.
type Tenant struct {
	// Store is the sequence configuration of the tenant's templates,
	// field by field over [Config.Store], as a template's Sequence is over
	// it: usually a table, key prefix, path or etcd prefix of the
	// tenant's own, such as {table: sn_shop}.
	// default: the Config's Store, which only one tenant (or the
	// templates of no tenant) may use.
	Store Sequence `json:"store" yaml:"store"`
}

// ObfuscationKey says where the key of one obfuscate= name is.
type ObfuscationKey struct {
	// Env is the environment variable that holds the key, at least 16
	// bytes: read at Validate and Build.
	// default: none; it is required.
	Env string `json:"env" yaml:"env"`
}

// obfuscation returns the sn options that give the keys of
// c.Obfuscation, and the problems with it.
func (c *Config) obfuscation() ([]sn.Option, []*Error) {
	var opts []sn.Option
	var errs []*Error
	for _, name := range slices.Sorted(maps.Keys(c.Obfuscation)) {
		k := c.Obfuscation[name]
		field := "obfuscation." + name + ".env"
		switch key := os.Getenv(k.Env); {
		case !validName(name):
			errs = append(errs, &Error{Field: "obfuscation", Err: fmt.Errorf("obfuscation %q: bad name: want letters, digits, \"_\", \"-\" and \".\"", name)})
		case k.Env == "":
			errs = append(errs, &Error{Field: field, Err: fmt.Errorf("%s: missing: name the environment variable that holds the key", field)})
		case key == "":
			errs = append(errs, &Error{Field: field, Err: fmt.Errorf("%s: the environment variable %s is not set", field, k.Env)})
		case len(key) < 16:
			errs = append(errs, &Error{Field: field, Err: fmt.Errorf("%s: the key in %s is %d bytes, want at least 16", field, k.Env, len(key))})
		default:
			opts = append(opts, sn.WithObfuscation(name, []byte(key)))
		}
	}
	return opts, errs
}

// Template is one named template of a [Config].
type Template struct {
	// Template is the template text, such as "SN-@<seq, width=8>".
	// default: none; it is required.
	Template string `json:"template" yaml:"template"`

	// Sequence overrides [Config.Store] for this template: each field that
	// is set here wins over the store's. A field that the template's
	// backend does not read (with Balanced, no member's backend) must be
	// left zero here.
	// default: the store's settings.
	Sequence Sequence `json:"sequence" yaml:"sequence"`

	// Floor, when positive, makes every number of the template greater
	// than Floor: [Config.Build] raises the counter to Floor with
	// sn.Generator.Floor (a floor never lowers a counter). It is meant for
	// migrations ("continue above the old system's numbers") and needs a
	// template whose counter key is fixed: no reset=, no key=, no per-call
	// ownerKey.
	// default: 0, no floor.
	Floor int64 `json:"floor,omitempty" yaml:"floor,omitempty"`

	// Profile is a legal profile the template must meet (sn.WithProfile):
	// "in-gst" (at most 16 characters of letters, digits, "-" and "/"),
	// "gapless" or "fr-continuous". The last two need a gapless sequence:
	// the sql backend opens one for them (each number drawn in a
	// transaction of the ledger, never from a block; see
	// sn.Generator.Transact and Hold), and every other backend, a queued
	// or a balanced sequence, is refused by Validate with the reason.
	// default: "", none.
	Profile string `json:"profile,omitempty" yaml:"profile,omitempty"`

	// Tenant names the tenant the template belongs to, one of
	// [Config.Tenants]: its store is the tenant's, and sn serve's tokens
	// of other tenants do not see it.
	// default: "", no tenant.
	Tenant string `json:"tenant,omitempty" yaml:"tenant,omitempty"`
}

// Sequence says where a template's numbers come from: a backend, and its
// fields. Package config reads the fields below, which every backend
// has: the backend's name, the steps of the blocks a sequence.Segment
// reserves, and the queue and balance package config builds around any
// store. A zero field takes the default in its comment. Each backend's
// own fields (a file's path, a server's URL) are in Options, which its
// [Driver] decodes.
//
// Each backend reads some of the fields (its Driver says which); the
// others must be left unset in a template's own Sequence.
type Sequence struct {
	// Backend names a registered [Driver]: memory, or bolt, sqlite, sql,
	// etcd, redis, redis-strict or snowflake, with the package that
	// registers it imported (see Backends; each documents its fields).
	// default: "memory".
	Backend string `json:"backend,omitempty" yaml:"backend,omitempty"`

	// Options are the backend's own fields, by their names in a file,
	// such as {"path": "sn.db"} for bolt: in a file they are written
	// beside the fields above. The backend's Driver decodes them, into a
	// struct of its own, with [Target.Decode]. A template's Options
	// replace the store's key by key, as its other fields do.
	// default: none.
	Options Options `json:"-" yaml:"-"`

	// Step is the size of the first block a segment reserves for a
	// counter key (bolt, sql and redis), or of each refill of the strict
	// counter (redis-strict).
	// default: sequence.DefaultStep (1000).
	Step int64 `json:"step,omitempty" yaml:"step,omitempty"`

	// MinStep is the smallest block a segment shrinks to.
	// default: Step.
	MinStep int64 `json:"min_step,omitempty" yaml:"min_step,omitempty"`

	// MaxStep is the largest block a segment grows to.
	// default: max(Step, 1000000).
	MaxStep int64 `json:"max_step,omitempty" yaml:"max_step,omitempty"`

	// Prefetch is the share of a block used before the next block is
	// fetched in the background, in (0, 1).
	// default: 0.2.
	Prefetch float64 `json:"prefetch,omitempty" yaml:"prefetch,omitempty"`

	// Target is how long one block should last, as a Go duration ("1m",
	// "30s"); a segment adapts its step to it.
	// default: "1m".
	Target string `json:"target,omitempty" yaml:"target,omitempty"`

	// FetchTimeout bounds each call to the store, as a Go duration.
	// default: "5s".
	FetchTimeout string `json:"fetch_timeout,omitempty" yaml:"fetch_timeout,omitempty"`

	// Idle is how long a segment keeps a counter key that goes unused, as
	// a Go duration: after it, the key's buffered numbers are a gap and
	// its memory is freed (a key per customer, say). A negative duration
	// keeps every key.
	// default: "10m".
	Idle string `json:"idle,omitempty" yaml:"idle,omitempty"`

	// Queued puts a queue of numbers drawn ahead of demand in front of the
	// sequence (sequence.Queued), so that a caller rarely waits for its
	// store: for a store that hands out one number per call, such as
	// redis-strict. With Balanced, each member has a queue of its own. It
	// is not used under [WithExact], whose calls reserve exactly what they
	// issue. An empty mapping (queued: {}) takes every default.
	// default: none, no queue.
	Queued *Queue `json:"queued,omitempty" yaml:"queued,omitempty"`

	// Balanced spreads the numbers over 2, 4, 8... member stores taken in
	// turn (sequence.Balanced), so that numbering goes on while some of
	// them are down. See [Balance].
	// default: none, one store.
	Balanced *Balance `json:"balanced,omitempty" yaml:"balanced,omitempty"`
}

// Queue configures the queue of [Sequence.Queued], as
// sequence.QueuedOptions. A zero field takes the default in its comment.
// A template's Queue replaces the store's field by field.
type Queue struct {
	// Lead is how long a key's queue lasts at the key's measured rate, as
	// a positive Go duration; a refill starts when half of it is left.
	// default: "50ms".
	Lead string `json:"lead,omitempty" yaml:"lead,omitempty"`

	// Min is the least numbers a key's queue is sized to.
	// default: 16.
	Min int64 `json:"min,omitempty" yaml:"min,omitempty"`

	// Max is the most numbers a key's queue is sized to, at least Min.
	// default: 65536.
	Max int64 `json:"max,omitempty" yaml:"max,omitempty"`

	// Idle is how long a key's queue is kept unused before it is dropped
	// (its numbers are a gap), as a Go duration; negative keeps every
	// queue.
	// default: "10m".
	Idle string `json:"idle,omitempty" yaml:"idle,omitempty"`
}

// Balance configures [Sequence.Balanced]: a sequence.Balanced over the
// Gens of its Members. Member i issues the numbers whose low n bits are i,
// for 2^n members: number = value<<n | i. So numbers are unique by
// construction, and not increasing.
//
// What a number means depends on the members' number and order: every
// process must list the same members in the same order, and a template
// whose members change (one added, two swapped), or that changes from one
// store to balanced ones, must take a new prefix or a floor above the
// numbers it issued before.
type Balance struct {
	// Members are the stores, 2, 4, 8... up to 65536 of them. Each is a
	// sequence of its own: the template's sequence (Queued included) with
	// the fields the member sets replaced, as a template's sequence
	// replaces the store's; a member cannot be Balanced itself. Two
	// members may not be one store: they would fail together.
	// default: none; required.
	Members []Sequence `json:"members,omitempty" yaml:"members,omitempty"`

	// Rescue is how long a member that failed stays out of the turn, as a
	// positive Go duration; it is still tried when every other member
	// fails.
	// default: "30s".
	Rescue string `json:"rescue,omitempty" yaml:"rescue,omitempty"`

	// Timeout bounds each call to a member, as a positive Go duration: a
	// slower call fails over to the next member.
	// default: none but the caller's context.
	Timeout string `json:"timeout,omitempty" yaml:"timeout,omitempty"`
}

// SegmentOptions returns the sequence.SegmentOptions that s describes,
// with zero fields left zero (for sequence.NewSegment's defaults). It
// returns an error naming each field that is out of range or, for Target
// and FetchTimeout, not a positive Go duration.
func (s Sequence) SegmentOptions() (sequence.SegmentOptions, error) {
	o := sequence.SegmentOptions{Step: s.Step, MinStep: s.MinStep, MaxStep: s.MaxStep, Prefetch: s.Prefetch}
	o.Target, _ = time.ParseDuration(s.Target)
	o.FetchTimeout, _ = time.ParseDuration(s.FetchTimeout)
	o.Idle, _ = time.ParseDuration(s.Idle)
	var errs []error
	for _, p := range s.problems("") {
		errs = append(errs, p.Err)
	}
	return o, errors.Join(errs...)
}

// problems checks the numbers and durations of s one by one and each
// against the others, naming them prefix+field. The backend is checked
// against the registry by Validate.
func (s Sequence) problems(prefix string) []*Error {
	var out []*Error
	bad := func(field, format string, a ...any) {
		out = append(out, &Error{Field: prefix + field, Err: fmt.Errorf(prefix+field+" "+format, a...)})
	}
	// The rules of the steps are the Segment's (SegmentOptions.Validate);
	// the durations, which are text here, are checked below.
	steps := sequence.SegmentOptions{Step: s.Step, MinStep: s.MinStep, MaxStep: s.MaxStep, Prefetch: s.Prefetch}
	if err := steps.Validate(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if oe, ok := e.(*sequence.OptionError); ok {
				bad(segmentFields[oe.Field], "%v: want %s", oe.Value, segmentFields.replace(oe.Want))
			}
		}
	}
	if _, err := time.ParseDuration(s.Idle); s.Idle != "" && err != nil {
		bad("idle", "%q: want a duration such as \"10m\" (negative: keep every key)", s.Idle)
	}
	for _, d := range []struct{ field, text string }{{"target", s.Target}, {"fetch_timeout", s.FetchTimeout}} {
		if d.text == "" {
			continue
		}
		if v, err := time.ParseDuration(d.text); err != nil || v <= 0 {
			bad(d.field, "%q: want a positive duration such as \"1m\" or \"30s\"", d.text)
		}
	}
	if s.Queued != nil {
		out = append(out, s.Queued.problems(prefix+"queued.")...)
	}
	if s.Balanced != nil {
		out = append(out, s.Balanced.problems(prefix+"balanced.")...)
	}
	return out
}

// segmentNames are the names in a file of the fields of a
// sequence.SegmentOptions, by their Go names.
type segmentNames map[string]string

// segmentFields names the fields of sequence.SegmentOptions as a file does.
var segmentFields = segmentNames{"Step": "step", "MinStep": "min_step", "MaxStep": "max_step", "Prefetch": "prefetch", "Target": "target", "FetchTimeout": "fetch_timeout"}

// replace spells, in what an OptionError wants, the fields it names as a
// file does.
func (n segmentNames) replace(want string) string {
	for _, w := range strings.Fields(want) {
		if name, ok := n[strings.TrimRight(w, ",")]; ok {
			want = strings.Replace(want, strings.TrimRight(w, ","), name, 1)
		}
	}
	return want
}

// positive reports text, the value of field, unless it is empty or a
// positive duration.
func positive(bad func(field, format string, a ...any), field, text string) {
	if text == "" {
		return
	}
	if v, err := time.ParseDuration(text); err != nil || v <= 0 {
		bad(field, "%q: want a positive duration such as \"50ms\" or \"30s\"", text)
	}
}

// problems checks the values of q, naming them prefix+field.
func (q Queue) problems(prefix string) []*Error {
	var out []*Error
	bad := func(field, format string, a ...any) {
		out = append(out, &Error{Field: prefix + field, Err: fmt.Errorf(prefix+field+" "+format, a...)})
	}
	positive(bad, "lead", q.Lead)
	if _, err := time.ParseDuration(q.Idle); q.Idle != "" && err != nil {
		bad("idle", "%q: want a duration such as \"10m\" (negative: keep every queue)", q.Idle)
	}
	for _, f := range []struct {
		field string
		v     int64
	}{{"min", q.Min}, {"max", q.Max}} {
		if f.v < 0 || f.v > math.MaxInt32 {
			bad(f.field, "%d: want 1 to %d (or 0 for the default)", f.v, math.MaxInt32)
		}
	}
	if q.Min > 0 && q.Min <= math.MaxInt32 {
		if limit := cmp.Or(q.Max, sequence.DefaultQueuedMax); q.Min > limit && limit > 0 {
			what := "max"
			if q.Max == 0 {
				what = "the default max"
			}
			bad("min", "%d: above %s %d", q.Min, what, limit)
		}
	}
	return out
}

// options returns the sequence.QueuedOptions of q, which problems
// accepted.
func (q Queue) options() sequence.QueuedOptions {
	o := sequence.QueuedOptions{Min: int(q.Min), Max: int(q.Max)}
	o.Lead, _ = time.ParseDuration(q.Lead)
	o.Idle, _ = time.ParseDuration(q.Idle)
	return o
}

// problems checks the values of b and each member's own, naming them
// prefix+field.
func (b Balance) problems(prefix string) []*Error {
	var out []*Error
	bad := func(field, format string, a ...any) {
		out = append(out, &Error{Field: prefix + field, Err: fmt.Errorf(prefix+field+" "+format, a...)})
	}
	switch n := len(b.Members); {
	case n == 0:
		bad("members", "missing: want a list of 2, 4, 8... stores")
	case n < 2 || n > sequence.MaxBalanced || n&(n-1) != 0:
		bad("members", "%d stores: want a power of two from 2 to %d (a member's index takes the low bits of each number)", n, sequence.MaxBalanced)
	}
	positive(bad, "rescue", b.Rescue)
	positive(bad, "timeout", b.Timeout)
	for i, m := range b.Members {
		at := fmt.Sprintf("%smembers[%d].", prefix, i)
		if m.Balanced != nil {
			out = append(out, &Error{Field: at + "balanced", Err: fmt.Errorf("%sbalanced: a member is one store, not balanced itself", at)})
			m.Balanced = nil
		}
		out = append(out, m.problems(at)...)
	}
	return out
}

// options returns the sequence.BalancedOptions of b, which problems
// accepted.
func (b Balance) options() sequence.BalancedOptions {
	var o sequence.BalancedOptions
	o.Rescue, _ = time.ParseDuration(b.Rescue)
	o.Timeout, _ = time.ParseDuration(b.Timeout)
	return o
}

// fields lists the fields of s that are set, by their file names, its
// Options' among them.
func (s Sequence) fields() []string {
	var out []string
	v := reflect.ValueOf(s)
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" && !v.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		if !zero(s.Options[k]) {
			out = append(out, k)
		}
	}
	return out
}

// zero reports whether v, a value of Options, is a zero value: unset, as
// a zero field of a Sequence is.
func zero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	}
	return false // a number, even 0, is set: worker 0 is a worker
}

// Options are a backend's own fields of a [Sequence], by their names in a
// file. A value is what a file holds: a string, a number (int or float64),
// true or false, a list or a mapping. As for the other fields of a
// Sequence, "" and false are unset: they take the store's value, or the
// default; a number, 0 included, is set.
type Options map[string]any

// over returns base with every field set in s replacing base's, and the
// backend defaulting to memory. Queued and Balanced replace base's field
// by field (a list of members as a whole).
func (base Sequence) over(s Sequence) Sequence {
	overlay(reflect.ValueOf(&base).Elem(), reflect.ValueOf(s))
	if base.Backend == "" {
		base.Backend = memoryName
	}
	return base
}

// overlay sets each field of the struct dst that is set in src, merging a
// pointer to a struct that both set into a new one, and two maps key by
// key into a new one, so that neither is changed.
func overlay(dst, src reflect.Value) {
	for i := range src.NumField() {
		f := src.Field(i)
		if f.IsZero() {
			continue
		}
		d := dst.Field(i)
		if f.Kind() == reflect.Map && !d.IsNil() {
			merged := reflect.MakeMap(f.Type())
			for _, m := range []reflect.Value{d, f} {
				for it := m.MapRange(); it.Next(); {
					if m == d || !zero(it.Value().Interface()) { // a zero value sets nothing, as a zero field
						merged.SetMapIndex(it.Key(), it.Value())
					}
				}
			}
			d.Set(merged)
			continue
		}
		if f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Struct && !d.IsNil() {
			merged := reflect.New(f.Elem().Type())
			merged.Elem().Set(d.Elem())
			overlay(merged.Elem(), f.Elem())
			d.Set(merged)
			continue
		}
		d.Set(f)
	}
}

// bare returns s without what package config itself builds around a
// store: its Queued and Balanced. A Driver sees a bare sequence.
func (s Sequence) bare() Sequence {
	s.Queued, s.Balanced = nil, nil
	return s
}

// Sequence returns the sequence configuration of template name: the
// store's, with the fields the template sets replaced, and the backend
// defaulting to memory. ok is false when there is no such template.
func (c *Config) Sequence(name string) (s Sequence, ok bool) {
	t, ok := c.Templates[name]
	if !ok {
		return Sequence{}, false
	}
	return c.storeOf(t.Tenant).over(t.Sequence), true
}

// storeOf returns the store of tenant's templates: the Config's Store
// with the fields the tenant's Store sets replaced.
func (c *Config) storeOf(tenant string) Sequence {
	if t, ok := c.Tenants[tenant]; ok && tenant != "" {
		return c.Store.over(t.Store)
	}
	return c.Store
}

// TenantNames returns the sorted names of the tenants.
func (c *Config) TenantNames() []string {
	return slices.Sorted(maps.Keys(c.Tenants))
}

// Names returns the sorted names of the templates.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Templates))
	for name := range c.Templates {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Decode decodes a Config from data in format "json" or "yaml" (or "yml").
// A key that names no field of the Config, a key given twice and a value
// of the wrong type are errors: each a *[Error] with its line and, inside
// a template, the template and the field; all of them are returned,
// joined. Decode does not check the values themselves nor the templates:
// call [Config.Validate] for that ([Config.Build] does).
func Decode(data []byte, format string) (*Config, error) {
	return parse(data, format, "")
}

// Load reads the Config in the file at path, whose extension (.json,
// .yaml or .yml) gives the format, as for [Decode]. Its errors, and those
// of [Config.Validate] on the Config, name the file.
func Load(path string) (*Config, error) {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	switch strings.ToLower(format) {
	case "json", "yaml", "yml":
	default:
		return nil, &Error{File: path, Err: fmt.Errorf("unknown extension %q (want .json, .yaml or .yml)", filepath.Ext(path))}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Err: err}
	}
	return parse(data, format, path)
}

// validName reports whether s can name a template.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
