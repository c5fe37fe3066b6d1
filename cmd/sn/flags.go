package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/redisseq"
)

// flags are the options of a command; each command registers those it
// takes.
type flags struct {
	cmd string
	fs  *flag.FlagSet

	template   string        // -t
	config     string        // --config
	n          int           // -n
	vars       sn.Vars       // --var
	at         time.Time     // --at
	store      string        // --store
	redis      string        // --redis
	ledger     string        // --ledger
	strict     bool          // --strict
	singleHost bool          // --single-host
	wait       time.Duration // --wait

	newStore string // the default store file, when it does not exist yet
}

// defaultWait is how long next waits for a store file another sn has open.
const defaultWait = 5 * time.Second

func newFlags(cmd string) *flags {
	f := &flags{cmd: cmd, fs: flag.NewFlagSet(cmd, flag.ContinueOnError), vars: sn.Vars{}}
	f.fs.SetOutput(io.Discard)
	f.fs.StringVar(&f.template, "t", "", "")
	f.fs.StringVar(&f.template, "template", "", "")
	f.fs.StringVar(&f.config, "config", "", "")
	return f
}

func (f *flags) count(def int) {
	f.fs.IntVar(&f.n, "n", def, "")
}

func (f *flags) call() {
	f.fs.Func("var", "", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		if _, dup := f.vars[k]; dup {
			return fmt.Errorf("%s given twice", k)
		}
		f.vars[k] = v
		return nil
	})
	f.fs.Func("at", "", func(s string) error {
		t, err := parseTime(s)
		if err != nil {
			return err
		}
		f.at = t
		return nil
	})
}

func (f *flags) stores() {
	f.fs.StringVar(&f.store, "store", "", "")
	f.fs.StringVar(&f.redis, "redis", "", "")
	f.fs.StringVar(&f.ledger, "ledger", "", "")
	f.fs.BoolVar(&f.strict, "strict", false, "")
	f.fs.BoolVar(&f.singleHost, "single-host", false, "")
	f.fs.DurationVar(&f.wait, "wait", defaultWait, "")
}

// parseTime reads --at: RFC 3339, or a date or date and time without a
// zone, taken as UTC.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a time such as 2017-03-04T10:00:00Z, 2017-03-04T18:00:00+08:00 or 2017-03-04, got %q", s)
}

// parse parses args, with flags allowed between the positional arguments,
// and returns the positional arguments. "--" ends the flags.
func (f *flags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef(f.cmd, "%v%s", err, f.didYouMean(err))
		}
		rest := f.fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, f.checkEmpty()
}

// wantValue says what each flag that names a thing wants, for an empty
// value.
var wantValue = map[string]string{
	"t":        "-t: want a template",
	"template": "--template: want a template",
	"config":   "--config: want a file name",
	"store":    "--store: want a file path (leave --store out for the default store)",
	"redis":    "--redis: want a URL such as redis://localhost:6379/0",
	"ledger":   "--ledger: want a database URL such as postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or etcd://host1:2379,host2:2379,host3:2379",
}

// checkEmpty refuses a flag given an empty value, as in --redis "$URL"
// with URL unset: sn must not fall back to another store silently.
func (f *flags) checkEmpty() error {
	var err error
	f.fs.Visit(func(fl *flag.Flag) {
		if want, ok := wantValue[fl.Name]; ok && err == nil && fl.Value.String() == "" {
			err = usagef(f.cmd, "empty value for %s", want)
		}
	})
	return err
}

// target is the template a command works on.
type target struct {
	name string         // the template's name in cfg ("template" for -t)
	cfg  *config.Config // holding just that template
	dir  string         // the config file's directory, for relative paths
}

// cliName is the name under which a -t template is built.
const cliName = "template"

// target resolves the template from -t or from --config and the first
// positional argument, which it removes from pos. It checks the whole
// config file, and the template, without opening any store. store is the
// store of a -t template, and of a config file that names none.
func (f *flags) target(pos []string, store config.Sequence) (*target, []string, error) {
	switch {
	case f.template != "" && f.config != "":
		return nil, nil, usagef(f.cmd, "give either -t TEMPLATE or --config FILE and a template name, not both")
	case f.template != "":
		cfg := &config.Config{Store: store, Templates: map[string]config.Template{cliName: {Template: f.template}}}
		if _, err := compile(f.template); err != nil {
			return nil, nil, &inputError{err}
		}
		return &target{name: cliName, cfg: cfg}, pos, nil
	case f.config != "":
		cfg, err := config.Load(f.config)
		if err != nil {
			return nil, nil, &inputError{err}
		}
		if cfg.Store.Backend == "" {
			// The flags' store, with the file's path unless --store
			// gives one, and the file's other fields of the store.
			opts := maps.Clone(cfg.Store.Options)
			if opts == nil {
				opts = config.Options{}
			}
			for _, k := range []string{"url", "ledger", "single_host"} {
				delete(opts, k)
				if v, ok := store.Options[k]; ok {
					opts[k] = v
				}
			}
			if _, ok := opts["path"]; !ok || f.store != "" {
				delete(opts, "path")
				if v, ok := store.Options["path"]; ok {
					opts["path"] = v
				}
			}
			cfg.Store.Backend, cfg.Store.Options = store.Backend, opts
		} else if f.storeFlags() {
			return nil, nil, usagef(f.cmd, "%s sets its store (store.backend: %s): --store, --ledger, --redis, --strict and --single-host do not apply", f.config, cfg.Store.Backend)
		}
		if err := cfg.ValidateIn(filepath.Dir(f.config)); err != nil {
			return nil, nil, &inputError{err}
		}
		names := strings.Join(cfg.Names(), ", ")
		if len(pos) == 0 {
			return nil, nil, usagef(f.cmd, "name a template of %s (one of: %s)", f.config, names)
		}
		name := pos[0]
		tc, ok := cfg.Templates[name]
		if !ok {
			return nil, nil, &inputError{fmt.Errorf("%s has no template %q (it has: %s)", f.config, name, names)}
		}
		one := &config.Config{Store: cfg.Store, Templates: map[string]config.Template{name: tc}}
		if tc.Tenant != "" {
			one.Tenants = map[string]config.Tenant{tc.Tenant: cfg.Tenants[tc.Tenant]}
		}
		return &target{name: name, cfg: one, dir: filepath.Dir(f.config)}, pos[1:], nil
	}
	return nil, nil, usagef(f.cmd, "give a template with -t TEMPLATE, or --config FILE and a template name")
}

// compile compiles a template with a placeholder sequence: for commands
// that draw no number.
func compile(text string) (*sn.Generator, error) {
	return sn.New(text, sn.WithSequence("seq", sequence.NewMemory()))
}

// generator compiles t's template without opening its store.
func (t *target) generator() *sn.Generator {
	g, err := compile(t.cfg.Templates[t.name].Template)
	if err != nil {
		// target checked the template already.
		panic(fmt.Sprintf("sn: template %q stopped compiling: %v", t.name, err))
	}
	return g
}

// placeholderStore stands for the store in commands that open none.
var placeholderStore = config.Sequence{Backend: "bolt", Options: config.Options{"path": "sn.db"}}

// storeFlags reports whether a flag that chooses the store was given.
func (f *flags) storeFlags() bool {
	return f.store != "" || f.redis != "" || f.ledger != "" || f.strict || f.singleHost
}

// isEtcd reports whether a ledger URL is an etcd cluster's.
func isEtcd(ledger string) bool {
	scheme, _, _ := strings.Cut(ledger, "://")
	return strings.EqualFold(scheme, "etcd") || strings.EqualFold(scheme, "etcds")
}

// storeConfig returns the store that --store, --ledger, --redis, --strict
// and --single-host describe:
//
//	(none), --store PATH                   bolt, the file
//	--ledger DSN                           sql, the ledger alone (etcd for an etcd:// ledger)
//	--redis URL --ledger DSN               redis, ranges reserved from the ledger
//	--redis URL                            redis alone (refused at first use unless it fsyncs every write)
//	--redis URL --strict --ledger DSN      redis-strict, refilled from the ledger
//	--redis URL --strict --single-host     redis-strict, refilled from the --store file
//
// It never pairs a Redis with a file of this machine's unless
// --single-host says that this host alone uses the Redis.
func (f *flags) storeConfig() (config.Sequence, error) {
	switch {
	case f.strict && f.redis == "":
		return config.Sequence{}, usagef(f.cmd, "--strict needs --redis URL")
	case f.singleHost && !f.strict:
		return config.Sequence{}, usagef(f.cmd, "--single-host goes with --redis URL --strict: it says that this host alone uses the Redis, so that the --store file may back its counter")
	case f.singleHost && f.ledger != "":
		return config.Sequence{}, usagef(f.cmd, "give either --ledger or --single-host: a ledger is shared by every machine, --single-host backs the counter with the --store file of this one")
	case f.ledger != "" && f.store != "":
		return config.Sequence{}, usagef(f.cmd, "--store is not used with --ledger: the numbers are kept in the ledger")
	case f.strict && f.ledger == "" && !f.singleHost:
		return config.Sequence{}, usagef(f.cmd, "--strict needs --ledger DSN, a database that every machine using the Redis shares, "+
			"or --single-host when this host alone uses it (the --store file then backs the counter)")
	case f.redis != "" && !f.strict && f.store != "":
		return config.Sequence{}, usagef(f.cmd, "--store is not used with --redis (unless --strict --single-host): give --ledger DSN to keep the numbers in a database")
	case f.redis != "" && f.strict && f.ledger != "":
		return config.Sequence{Backend: "redis-strict", Options: config.Options{"url": f.redis, "ledger": f.ledger}}, nil
	case f.redis != "" && !f.strict:
		return config.Sequence{Backend: "redis", Options: config.Options{"url": f.redis, "ledger": f.ledger}}, nil
	case f.ledger != "" && isEtcd(f.ledger):
		return config.Sequence{Backend: "etcd", Options: config.Options{"ledger": f.ledger}}, nil
	case f.ledger != "":
		return config.Sequence{Backend: "sql", Options: config.Options{"ledger": f.ledger}}, nil
	}
	path := f.store
	if path == "" {
		var err error
		if path, err = defaultStorePath(); err != nil {
			return config.Sequence{}, err
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			f.newStore = path
		}
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if f.strict {
		return config.Sequence{Backend: "redis-strict", Options: config.Options{"url": f.redis, "path": path, "single_host": true}}, nil
	}
	return config.Sequence{Backend: "bolt", Options: config.Options{"path": path}}, nil
}

// explain adds to err what to do about it, when it is a Redis refused as
// the only keeper of the numbers.
func (f *flags) explain(err error) error {
	if !errors.Is(err, redisseq.ErrUnsafe) {
		return err
	}
	how := "give sn a ledger, a database every machine shares, with --ledger postgres://... or mysql://..."
	if f.config != "" && f.redis == "" {
		how = "give the template's sequence a ledger (ledger: postgres://... or mysql://...) in " + f.config
	}
	return errors.Join(err, fmt.Errorf("without a ledger, Redis keeps the numbers alone and may lose some it handed out: %s, or run Redis with appendonly yes and appendfsync always", how))
}

// defaultStorePath returns $XDG_STATE_HOME/sn/sn.db, or
// ~/.local/state/sn/sn.db, creating its directory.
func defaultStorePath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no place for the store (%v): give one with --store PATH", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "sn")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the store's directory: %w (give another store with --store PATH)", err)
	}
	return filepath.Join(dir, "sn.db"), nil
}

// didYouMean suggests, for a flag the command does not define, the
// closest one it does.
func (f *flags) didYouMean(err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	dashes := "--"
	if strings.HasPrefix(name, "-") && !strings.HasPrefix(name, "--") && len(name) == 2 {
		dashes = "-"
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	f.fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	if best := parser.Closest(name, names); best != "" {
		if len(best) == 1 {
			dashes = "-"
		}
		return fmt.Sprintf(", did you mean %s%s?", dashes, best)
	}
	return ""
}
