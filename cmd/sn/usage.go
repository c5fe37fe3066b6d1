package main

import (
	"errors"
	"flag"
	"io"
	"strings"
)

// flagHelp documents each flag once; commands list the ones they take.
var flagHelp = map[string]string{
	"t": `-t, --template TEMPLATE  the template, such as 'SN-@<seq, width=8>'`,
	"config": `--config FILE            a YAML or JSON file of named templates; name one
                           after the command instead of giving -t`,
	"n": `-n COUNT                 how many numbers`,
	"listen": `--listen HOST:PORT       the address to serve on (default: the config's
                           serve.listen, or 127.0.0.1:8080)`,
	"tls":     `--tls-cert, --tls-key    serve HTTPS with this certificate and key (PEM files)`,
	"url":     `--url URL                the address to ask (default ` + defaultHealthURL + `)`,
	"timeout": `--timeout DURATION       how long to wait for the answer (default 5s)`,
	"var":     `--var NAME=VALUE         a per-call variable, printed by @<NAME>; repeatable`,
	"key":     `--key KEY                a counter key, as sn parse and sn series print it`,
	"from":    `--from N, --to N         the numbers to account for (default: 1 to the mark)`,
	"to":      `--to N                   (see --from)`,
	"all":     `--all                    print the issued runs too`,
	"anchor":  `--anchor RECORD:HASH     a record and hash sn verify printed before; repeatable`,
	"public-key": `--public-key FILE        the public key (PEM, from sn keygen) whose signature
                           a pruned journal's first record must carry; repeatable`,
	"seal-key": `--seal-key FILE          the private key (PEM, from sn keygen) that signs the
                           prune; keep it where the store's writers cannot read it`,
	"out":    `--out PREFIX             write PREFIX.key and PREFIX.pub (default sn-seal)`,
	"reason": `--reason TEXT            why the numbers are void: an auditor reads it`,
	"yes":    `--yes                    do it (without, print what would be done)`,
	"actor":  `--actor NAME             who voids them (default: none; the process is recorded)`,
	"at": `--at TIME                the document's instant instead of now, such as
                           2017-03-04T10:00:00Z or 2017-03-04 (UTC)`,
	"store": `--store PATH             the embedded store file (default
                           $XDG_STATE_HOME/sn/sn.db, else ~/.local/state/sn/sn.db)`,
	"ledger": `--ledger DSN             the ledger, a database every machine shares:
                           postgres://user:password@host:5432/db or
                           mysql://user:password@host:3306/db; its table,
                           sn_ledger, is created on first use (or made
                           beforehand: sn ddl)`,
	"redis": `--redis URL              take numbers from Redis: redis://host:6379/0,
                           rediss://..., redis+cluster://host1:7000,host2:7001;
                           with --ledger, from ranges reserved from the ledger`,
	"strict": `--strict                 with --redis: one counter in Redis, first come first
                           served across machines, refilled from the --ledger`,
	"single-host": `--single-host            with --redis --strict and no --ledger: this host
                           alone uses the Redis, so the --store file may refill
                           its counter`,
	"wait": `--wait DURATION          how long to wait for a store file another sn has
                           open (default 5s)`,
	"dry-run": `--dry-run                print what would be done, change nothing`,
	"dialect": `--dialect NAME           postgres, mysql or sqlite, when no --ledger says it`,
	"table":   `--table NAME             the ledger's table (default sn_ledger), as in config`,
	"role": `--role ROLE              the role sn connects as (PostgreSQL: a name;
                           MySQL: 'user'@'host'), to print its grants`,
}

// storeHelp says which flags choose which store.
const storeHelp = `STORE says where the numbers are kept (a config file's store says it instead):
  (none), --store PATH     a file of this machine's
  --ledger DSN             a table in PostgreSQL or MySQL that every machine
                           shares, the ledger
  --redis URL --ledger DSN
                           blocks served by Redis from ranges reserved from the
                           ledger: if Redis loses its data, a gap, never a repeat
  --redis URL              Redis alone, with no ledger: refused unless Redis runs
                           with appendonly yes and appendfsync always
  --redis URL --strict --ledger DSN
                           one counter in Redis, first come first served across
                           machines, refilled from the ledger
  --redis URL --strict --single-host [--store PATH]
                           the same, refilled from the file: only when this host
                           alone uses the Redis`

type command struct {
	synopsis string
	summary  string
	flags    []string
	more     string
	examples []string
}

var help = map[string]command{
	"next": {
		synopsis: "sn next (-t TEMPLATE | --config FILE NAME) [-n COUNT] [--var NAME=VALUE]... [--at TIME]\n" +
			"         [STORE] [--wait DURATION]",
		summary: "issue numbers, one per line, continuing across runs",
		flags:   []string{"t", "config", "n", "var", "at", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `-n defaults to 1. Each run reserves in the store exactly the numbers it
prints, so the next run continues after them and no number is skipped,
unless a run dies between reserving and printing (a gap, never a repeat).
Progress goes to stderr for long runs when it is a terminal. Ctrl-C stops
after printing the numbers issued so far (exit status 130).

` + storeHelp,
		examples: []string{
			`sn next -t 'SN-@<seq, width=8>-@<checksum, algo=luhn>' -n 5`,
			`sn next -t 'QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>' --at 2017-03-04`,
			`sn next -t '@<area>-@<seq, width=5, key=area>' --var area=010 -n 3`,
			`sn next --config sn.yaml orders -n 3`,
			`sn next -t 'SN@<seq, width=8>' --ledger postgres://sn@db.internal/shop`,
			`sn next -t 'SN@<seq, width=8>' --redis redis://cache:6379/0 --ledger mysql://sn:secret@db:3306/shop`,
		},
	},
	"validate": {
		synopsis: "sn validate (-t TEMPLATE | --config FILE NAME) [NUMBER...]",
		summary:  "check that numbers fit the template",
		flags:    []string{"t", "config"},
		more: `Checks the numbers given, or else those on stdin, one per line: structure,
widths, dates and check characters. Prints "NUMBER: ok" or why the number is
invalid. Exit status 0 when all are valid, 1 when one is not.`,
		examples: []string{
			`sn validate -t 'SN-@<seq, width=8>-@<checksum, algo=luhn>' SN-00000001-8 SN-00000001-9`,
			`sn validate --config sn.yaml orders < numbers.txt`,
		},
	},
	"parse": {
		synopsis: "sn parse (-t TEMPLATE | --config FILE NAME) [NUMBER...]",
		summary:  "read numbers back: the counter and the number each was drawn from",
		flags:    []string{"t", "config"},
		more: `Reads the numbers given, or else those on stdin, one per line, and prints
for each the counter key and the number drawn from it, then the variables:
  010-6541-00012: counter "...|unit=6541" number 12; area="010" unit="6541"
A number that does not fit prints why. Exit status 0 when all fit, 1 when
one does not.`,
		examples: []string{
			`sn parse -t '@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=5, key=unit>' 010-6541-00012`,
		},
	},
	"floor": {
		synopsis: "sn floor (-t TEMPLATE | --config FILE NAME) [--dry-run] [STORE] [--wait DURATION] [NUMBER...]",
		summary:  "raise counters above existing numbers, for migrating from another system",
		flags:    []string{"t", "config", "dry-run", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `Reads the numbers given, or else those on stdin, one per line: numbers
another system printed with the same template. Each is read back with the
template; then every counter they were drawn from is raised so that the next
number is above the largest of them. A counter is never lowered. If one
number does not fit the template, nothing is changed (exit status 1).
--dry-run prints what would be done and opens no store. STORE chooses the
store as for sn next (see sn help next).`,
		examples: []string{
			`sn floor -t 'SN-@<seq, width=8>-@<checksum, algo=luhn>' SN-00004711-9`,
			`sn floor --config sn.yaml invoices --dry-run < old-invoice-numbers.txt`,
			`sn floor -t 'INV@<seq, width=6>' --ledger postgres://sn@db.internal/shop INV004711`,
		},
	},
	"explain": {
		synopsis: "sn explain (-t TEMPLATE | --config FILE NAME)",
		summary:  "describe a template: parts, evaluation order, counter key, length, regexp",
		flags:    []string{"t", "config"},
		examples: []string{`sn explain -t '@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>'`},
	},
	"preview": {
		synopsis: "sn preview (-t TEMPLATE | --config FILE NAME) [-n COUNT] [--var NAME=VALUE]... [--at TIME]",
		summary:  "print sample numbers, drawing nothing from any store",
		flags:    []string{"t", "config", "n", "var", "at"},
		more:     `-n defaults to 3. Sequences print 1, 2, 3...; variables not given print as {NAME}.`,
		examples: []string{`sn preview -t 'INV-@<date, format=yyyyMM>-@<seq, width=4, reset=month>' --at 2017-03-04`},
	},
	"series": {
		synopsis: "sn series [list | check TEMPLATE | forget ID [--yes]] [STORE | --config FILE]",
		summary:  "list, check against and forget the templates a store has served",
		flags:    []string{"config", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `Every store keeps a catalog of the templates drawn from it, by any
process on any machine. Before its first number a template is proven
against each of them: one that could print a number another printed, from
another counter or as another number, is refused, naming the template it
collides with, when and by whom that was first used, and a number both
print. The same template in another spelling, or widened, continues.
list shows each template with its counter keys, the last number reserved
and how much of its width is used; check proves a template against the
catalog and records nothing; forget removes an entry, which lets a later
template print that entry's numbers again: it says so, and needs --yes.`,
		examples: []string{
			`sn series --ledger postgres://sn@db/shop`,
			`sn series check 'SN-@<seq, width=8>' --config sn.yaml`,
			`sn series forget 5f3a9c0e12ab --yes --store sn.db`,
		},
	},
	"gaps": {
		synopsis: "sn gaps (-t TEMPLATE | --config FILE NAME) [NUMBER | --key KEY | --at TIME --var NAME=VALUE...] [--from N] [--to N] [--all] [STORE]",
		summary:  "say where every number of a counter went: issued, void, unused, skipped or lost in a crash",
		flags:    []string{"t", "config", "key", "at", "var", "from", "to", "all", "public-key", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `Reads the journal of one counter, the one a NUMBER of the series was drawn
from, --key names, or --at and --var choose (a period, a customer), and
prints every run of numbers that was not issued, with its cause: voided
(who, when, why), released unused (at a close, a period's end, under a
floor), skipped by a floor, held for a gapless commit, or in a block whose
process never closed (issued, or lost in a crash: the block bounds it).
--all prints the issued runs too. Exit status 0 only when the journal
verifies and accounts for every number; 1 when a number is unaccounted for,
a gapless hold has lapsed, or the journal was tampered with.`,
		examples: []string{
			`sn gaps --config sn.yaml invoices --at 2026-11`,
			`sn gaps -t 'INV-@<seq, width=6>' INV-008206 --from 8000 --to 8300`,
		},
	},
	"verify": {
		synopsis: "sn verify (-t TEMPLATE | --config FILE NAME) [NUMBER | --key KEY | --at TIME --var NAME=VALUE...] [--anchor RECORD:HASH]... [--public-key FILE]... [STORE]",
		summary:  "check a counter's journal: no record altered, deleted or inserted",
		flags:    []string{"t", "config", "key", "at", "var", "anchor", "public-key", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `Each record of a journal carries the hash of the one before; the store
keeps the last beside the counter. verify recomputes the chain and names the
first record that was altered, deleted or inserted, and prints the anchor
(the last record and its hash). Keep anchors where the store's writers
cannot reach them, and give them back with --anchor: a chain recomputed
whole by someone who knows the algorithm no longer passes through them.
A pruned journal starts with a record signed by the key that pruned it:
give its public key with --public-key, or verify fails saying which key.
Anchors taken before the prune still verify.`,
		examples: []string{
			`sn verify --config sn.yaml invoices --at 2026-11`,
			`sn verify -t 'INV-@<seq, width=6>' INV-008206 --anchor 412:5dbccf048de10d149fd1bf0175bdd31b729f68b09ac5f6b653f3525765044be8`,
		},
	},
	"void": {
		synopsis: "sn void (-t TEMPLATE | --config FILE NAME) --reason TEXT [--actor NAME] NUMBER... [STORE]",
		summary:  "record numbers as void, with the reason, in their counters' journals",
		flags:    []string{"t", "config", "reason", "actor", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `A void number stays used: it is never issued again, and sn gaps lists it
with the reason, who voided it and when. A number not issued yet cannot be
voided. For a gapless series it is the only way a number leaves the series
unused.`,
		examples: []string{
			`sn void --config sn.yaml invoices --reason "issued in error, replaced by INV-008207" --actor alice INV-008206`,
		},
	},
	"prune": {
		synopsis: "sn prune (-t TEMPLATE | --config FILE NAME) [NUMBER | --key KEY | --at TIME --var NAME=VALUE...] --seal-key FILE [--public-key FILE]... [--yes] [STORE]",
		summary:  "replace a closed period's journal with one signed record that sums it up",
		flags:    []string{"t", "config", "key", "at", "var", "seal-key", "public-key", "yes", "store", "ledger", "redis", "strict", "single-host", "wait"},
		more: `For a counter whose period is closed and whose retention is over (the years
the law keeps invoices: 10 in Germany, 6 in France, 8 in India): the records
of its journal are replaced with one that says how many numbers were issued,
void, unused, skipped or open, and keeps the hashes of those it replaces, so
that the anchors taken before still verify. The record is signed with the
--seal-key (sn keygen): whoever can write the store cannot make one, and
sn verify --public-key checks it. Without --yes it prints what it would do.
A journal that does not verify is kept as it is. sn never prunes on its own.`,
		examples: []string{
			`sn prune --config sn.yaml invoices --at 2015 --seal-key /run/secrets/sn-seal.key --yes`,
		},
	},
	"keygen": {
		synopsis: "sn keygen [--out PREFIX]",
		summary:  "make the Ed25519 key pair that signs prunes and checks them",
		flags:    []string{"out"},
		more: `Writes PREFIX.key, the private key sn prune signs with (readable by its
owner only: keep it away from the store and its writers), and PREFIX.pub,
the public key sn verify and sn gaps check a pruned journal with (give it
to the auditor). It never overwrites a file.`,
		examples: []string{`sn keygen --out /run/secrets/sn-seal`},
	},
	"ddl": {
		synopsis: "sn ddl (--ledger DSN | --dialect postgres|mysql|sqlite) [--table NAME] [--role ROLE]",
		summary:  "print the statements that make a store's tables, and the grants sn needs on them",
		flags:    []string{"ledger", "dialect", "table", "role"},
		more: `For a DBA who makes sn's tables and keeps the right to create them: run the
statements as the tables' owner, in the ledger's database, and give the role sn
connects as the grants --role prints. sn then finds every table and creates
nothing. The ledger is not connected to: its URL says the database. On
PostgreSQL the role gets pg_monitor, so that the check of replication can read
the state of each standby; a server without standbys does not need it.`,
		examples: []string{
			`sn ddl --ledger postgres://db1/billing --role sn_app`,
			`sn ddl --dialect mysql --table billing.sn_ledger --role "'sn'@'%'"`,
		},
	},
	"health": {
		synopsis: "sn health [--url URL] [--timeout DURATION]",
		summary:  "ask a running sn serve whether it is ready (a container's health check)",
		flags:    []string{"url", "timeout"},
		more: `Exits 0 when the URL (default ` + defaultHealthURL + `, sn serve's readiness:
every store answers) answers 200, and 1 otherwise, with the answer. The image
of sn has no shell and no curl: its HEALTHCHECK runs this. /healthz answers
while the process runs, /readyz while its stores do.`,
		examples: []string{`sn health`, `sn health --url https://sn.internal:8443/healthz --timeout 2s`},
	},
	"version": {
		synopsis: "sn version",
		summary:  "print the version of sn and the revision it was built from",
		examples: []string{`sn version`},
	},
	"serve": {
		synopsis: "sn serve --config FILE [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE]",
		summary:  "serve the config file's templates over HTTP and JSON",
		flags:    []string{"config", "listen", "tls"},
		more: `The API is under /v1 (GET /v1/templates; POST /v1/templates/NAME/next
with {"n": 10, "vars": {...}, "at": "..."}; /preview, /validate, /parse);
GET /healthz answers while the process runs, GET /readyz while every store
answers; /monitor is a page of the stores, keys and blocks, /metrics the
Prometheus metrics. Bearer tokens come from $SN_TOKENS (comma-separated),
or the variable and the file the config's serve section names: without
them, sn serve listens only on a loopback address. The serve section also
gives listen, tls_cert, tls_key and max_body; flags override it. SIGTERM
lets requests in flight finish (up to 30s), then closes the stores.`,
		examples: []string{
			`sn serve --config sn.yaml`,
			`SN_TOKENS=$(cat /run/secrets/sn-tokens) sn serve --config /etc/sn.yaml --listen :8080 --tls-cert cert.pem --tls-key key.pem`,
		},
	},
}

var order = []string{"next", "validate", "parse", "floor", "explain", "preview", "series", "gaps", "verify", "void", "prune", "keygen", "ddl", "serve", "health", "version"}

// writeUsage writes the usage of cmd, or of sn when cmd is "".
func writeUsage(w io.Writer, cmd string) {
	var b strings.Builder
	if c, ok := help[cmd]; ok {
		b.WriteString("Usage: " + c.synopsis + "\n\n")
		b.WriteString(capitalize(c.summary) + ".\n")
		if c.more != "" {
			b.WriteString("\n" + c.more + "\n")
		}
		b.WriteString("\nFlags:\n")
		for _, f := range c.flags {
			b.WriteString("  " + flagHelp[f] + "\n")
		}
		b.WriteString("\nExamples:\n")
		for _, ex := range c.examples {
			b.WriteString("  " + ex + "\n")
		}
		io.WriteString(w, b.String())
		return
	}
	b.WriteString(`sn issues business numbers (order, invoice, ticket numbers) from templates.

Usage:
  sn COMMAND [flags] [arguments]

Commands:
`)
	for _, name := range order {
		b.WriteString("  " + pad(name, 9) + help[name].summary + "\n")
	}
	b.WriteString("  " + pad("help", 9) + "print this help, or a command's: sn help next\n")
	b.WriteString(`
A template is text with parts in @< >, such as
  SN-@<seq, width=8>-@<checksum, algo=luhn>                 SN-00000001-8
  QJ@<date, format=yyyyMMdd>@<seq, width=5, reset=day>      QJ2017030400001
Numbers never repeat within a store, across runs and templates: a store
keeps a catalog of its templates and refuses one that could print another's
numbers. A series issued on several machines needs one store that all of
them share (--ledger).

Flags:
`)
	for _, f := range []string{"t", "config", "n", "var", "at", "store", "ledger", "redis", "strict", "single-host", "wait"} {
		b.WriteString("  " + flagHelp[f] + "\n")
	}
	b.WriteString(`
` + storeHelp + `

Config file (YAML or JSON; a relative path is relative to the file):
  store: {backend: bolt, path: sn.db}    # default: the store of the flags
  # shared by every machine: {backend: sql, ledger: "postgres://sn@db/shop"}
  # or Redis over it: {backend: redis, url: "redis://cache:6379/0", ledger: ...}
  templates:
    orders:  {template: "SN-@<seq, width=8>-@<checksum, algo=luhn>", floor: 20000}
    tickets: {template: "QJ@<seq, width=6>", sequence: {path: tickets.db}}

Exit status: 0 on success; 1 on an error, or when validate finds an invalid
number; 2 for bad usage, a bad template or config file; 130 when interrupted;
141 when the reader of the output went away (sn next -n 1000 | head -1).

Examples:
`)
	for _, name := range order {
		b.WriteString("  " + help[name].examples[0] + "\n")
	}
	io.WriteString(w, b.String())
}

func pad(s string, n int) string { return s + strings.Repeat(" ", max(n-len(s), 1)) }

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func cmdHelp(e *env, args []string) error {
	switch {
	case len(args) == 0:
		writeUsage(e.out, "")
	case len(args) == 1:
		if _, ok := help[args[0]]; !ok {
			return usagef("help", "unknown command %q", args[0])
		}
		writeUsage(e.out, args[0])
	default:
		return usagef("help", "too many arguments")
	}
	return nil
}

// helpOr prints cmd's usage to stdout when err is flag.ErrHelp (-h), and
// returns err otherwise.
func helpOr(e *env, cmd string, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(e.out, cmd)
		return nil
	}
	return err
}
