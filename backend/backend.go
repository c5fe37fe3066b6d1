// Package backend registers the durable backends of package
// github.com/sngen/sn/config: "bolt", an embedded bbolt file (package
// backend/bolt, which it imports; a program that uses bolt alone imports
// that package instead, and links no database client); "sqlite",
// one SQLite file that the processes of one machine share; "sql", a
// ledger table in PostgreSQL or MySQL; "etcd", a ledger in an etcd
// cluster; "redis", blocks of numbers reserved
// from Redis; "redis-strict", every number from one Redis counter; and
// "snowflake", time-ordered ids with a worker id leased from Redis. They
// live here, and not in package config, so that a program using only
// memory sequences never links a database client. Import the package for
// its side effect:
//
//	import _ "github.com/sngen/sn/backend"
//
//	cfg, err := config.Load("sn.yaml")
//	if err != nil { ... }
//	set, err := cfg.Build(ctx, config.WithDir("/var/lib/myapp"))
//	if err != nil { ... }
//	defer set.Close()
//	orders, _ := set.Get("orders")
//
// A Build opens each bolt file once, each ledger database once (one
// *sql.DB per URL) and connects to each Redis URL once, however many
// templates use them (a bolt file named by bolt and by redis-strict
// templates is one store), and the Set closes them when it is closed. The
// bolt, sql and redis backends wrap each template's allocator in a
// sequence.Segment with the template's steps or, under config.WithExact,
// reserve exactly what each call asks for. A redis-strict sequence is
// redisseq's strict Counter.
//
// # Fields
//
// Each backend reads fields of its own, written beside the common ones in
// a file and decoded with config.Target.Decode, and some of the steps of
// the sequence.Segment it serves through:
//
//	bolt           path (required), step, min_step, max_step, prefetch, target, fetch_timeout, idle
//	sql            ledger (required), table, replication, step, min_step, max_step, prefetch, target, fetch_timeout, idle
//	etcd           ledger (an etcd URL), or endpoints, prefix, username, password, tls_ca, tls_cert and tls_key;
//	               step, min_step, max_step, prefetch, target, fetch_timeout, idle
//	redis          url (required), prefix, replicas, replica_timeout, ledger, table,
//	               step, min_step, max_step, prefetch, target, fetch_timeout, idle
//	redis-strict   url (required), prefix, replicas, replica_timeout, ledger, table,
//	               and without a ledger path and single_host (required),
//	               step, fetch_timeout (bounds the first PING and the ledger's set-up)
//	snowflake      layout, and with explicit bits epoch (required) and unit;
//	               url and prefix, or ledger and table, to lease the worker id;
//	               or worker and single_process (required)
//
// Package config itself reads queued and balanced, whatever the backend.
//
// path is a file, relative to config.WithDir's directory; url a Redis
// URL (see Redis URLs); ledger a database URL (see Ledgers), table its
// table (default sn_ledger); prefix the Redis keys' prefix; replicas how
// many Redis replicas must acknowledge each range before it is used (WAIT,
// so that a failover to a lagging replica cannot issue numbers again),
// replica_timeout how long to wait for them (default 1s); single_host that
// one host alone uses the Redis; worker a fixed snowflake worker id, for
// one process alone (single_process). A field a backend does not read is
// refused in a template's own sequence, with a did-you-mean for a typo.
//
// # Ledgers
//
// A ledger is a table in PostgreSQL or MySQL (sqlseq) that records every
// number handed out, shared by every machine that issues numbers. Its
// ledger field is a URL:
//
//	postgres://user:password@host:5432/db?sslmode=disable   PostgreSQL, through pgx (or postgresql://)
//	mysql://user:password@host:3306/db                      MySQL 8 or MariaDB 10.5+, through go-sql-driver/mysql
//
// A mysql URL becomes the driver's DSN, user:password@tcp(host:3306)/db?parseTime=true,
// its query the DSN's parameters. The table (table, default "sn_ledger")
// is created when a Build first opens the ledger, within fetch_timeout.
//
// A SQL ledger's replication is read then, and again in every transaction
// that writes (sqlseq.Store.CheckReplication): a server that could have a
// standby that is not synchronous (PostgreSQL), or a replica that is not
// semi-synchronous (MariaDB), is refused, for a failover to a standby that
// lagged hands out again the numbers the primary handed out last. A
// server provably alone (no WAL sender, no binary log) is accepted. Make
// the standbys synchronous, or set replication: single-server (the server
// never fails over) or replication: accept-async-failover-loss. Name every
// server of a
// replicated ledger, with target_session_attrs=read-write, so that a
// failover is followed:
//
//	postgres://sn:secret@db1:5432,db2:5432/orders?target_session_attrs=read-write
//
// A ledger may also be an etcd cluster (etcdseq), which survives the loss
// of a minority of its members without losing a range it acknowledged:
//
//	etcd://host1:2379,host2:2379,host3:2379                 the members' client URLs (port 2379 by default)
//	etcds://user:password@host1:2379,host2:2379/billing/?ca=/etc/sn/ca.pem&cert=/etc/sn/client.pem&key=/etc/sn/client-key.pem
//
// etcds connects with TLS: ca is the certificate authority's file (default:
// the system's), cert and key a client certificate; user and password are
// etcd's authentication; the path is the prefix of the ledger's keys
// (default sn/). The etcd backend issues from it alone, as sql does from a
// database; redis and redis-strict reserve their ranges from it. A Build
// refuses to start when the cluster has no leader or majority within
// fetch_timeout. A snowflake sequence leases its worker id from an etcd
// ledger's records (etcdseq.Leaser).
//
// The sql backend issues from the ledger alone: one statement per block.
// The redis backend with a ledger serves blocks from ranges in Redis
// reserved from the ledger (redisseq.NewAllocator), and redis-strict with
// a ledger refills its counter from it (redisseq.NewCounter): if Redis
// loses its data, the next range comes from the ledger, above everything
// issued on any machine, a gap and never a repeat.
//
// Redis is never paired silently with a store of one machine's:
//
//   - redis without a ledger keeps its counters in Redis alone
//     (redisseq.NewRedisOnlyAllocator), and its first call refuses, with an
//     error wrapping redisseq.ErrUnsafe, a Redis that does not run with
//     appendonly yes and appendfsync always;
//   - redis-strict without a ledger is refused, unless single_host: true
//     says that one host alone uses the Redis: then the bolt file at its
//     path backs the counter.
//
// A relative path is resolved against the directory of config.WithDir;
// config.WithLockWait bounds the wait for a bolt file that another
// process has open (default boltseq.DefaultLockTimeout).
//
// # Snowflake ids
//
// A snowflake sequence issues time-ordered ids (sequence/snowflake) in its
// layout: twitter (the default, bwmarrin/snowflake's), sonyflake (sonyflake
// v2's), or explicit bits of time, worker and sequence, "41/10/12", with an
// epoch (a date or an RFC 3339 instant, not in the future) and a unit
// (default 1ms). The layout must last ten more years.
//
// Its worker id is leased from the Redis at url (redisseq.NewLeaser, keys
// under prefix): the lease is renewed in the background, and each renewal
// records a bound that the next holder of the id issues after, so two
// processes never issue one id, even across a clock rollback. That Redis
// must fsync every write (appendonly yes, appendfsync always): Build
// fails with an error wrapping redisseq.ErrUnsafe otherwise. The
// templates of a Build with one layout, url and prefix share one Gen and
// so one lease, which the Set releases when it is closed.
//
// A fixed worker id (worker: 3) repeats ids when two processes use it,
// and every copy of a config file has the same one; it is refused unless
// single_process: true says that one process alone uses it (a test, a
// tool). Its sequences are not durable (sn next refuses them). Snowflake
// ids are not counted: a template with a floor is refused, and a
// snowflake whose layout takes all 63 bits (twitter, sonyflake) cannot be
// a balanced member, whose index needs low bits of its own.
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
//	redis+sentinel://host1:26379,host2:26379/master[/db][?option=value...]
//	                                                            the master Redis Sentinel names
//	rediss+sentinel://...                                       the same over TLS
//
// The options are those of go-redis's ParseURL, ParseClusterURL and
// ParseFailoverURL (dial_timeout=3s, pool_size=10, ...). A cluster URL lists
// its seed nodes separated by commas (or as addr= options); the client
// discovers the rest. A sentinel URL lists the sentinels, and its path is
// the name they monitor the master by; the user and password in it are
// the sentinels', the master's are the username= and password= options.
// After a failover the client follows the master the sentinels name.
// Replication is asynchronous: without a ledger, set replicas so that each
// range is on a replica before it is used, or a promoted replica that
// lagged issues it again; with a ledger, a replica that lagged costs a
// gap.
package backend

import (
	"errors"
	"fmt"
	"time"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"

	_ "github.com/sngen/sn/backend/bolt"   // the bolt and sqlite backends, which this package
	_ "github.com/sngen/sn/backend/sqlite" // registered before they had packages of their own
)

func init() {
	config.Register("sql", sqlDriver{})
	config.Register("redis", redisDriver{})
	config.Register("redis-strict", strictDriver{})
	config.Register("snowflake", snowflakeDriver{})
	config.Register("etcd", etcdDriver{})
}

// seq is a sequence as the drivers of this package read it: the fields
// every backend has (config.Sequence), and the backends' own, decoded
// from its Options (config.Target.Decode). Each driver reads those its
// config.StoreInfo.Fields lists.
type seq struct {
	config.Sequence

	// Path is the file of a backend that keeps its numbers in one: the
	// bbolt file of bolt, and the durable store behind redis-strict's
	// counter when it has no ledger (see SingleHost). A relative path is
	// resolved against the directory given to config.WithDir.
	Path string `yaml:"path"`

	// URL is the Redis of redis and redis-strict, and the Redis a
	// snowflake sequence leases its worker id from; see "Redis URLs".
	URL string `yaml:"url"`

	// Ledger is the database that keeps the record of every number
	// handed out, shared by every machine that issues numbers: the store
	// of sql, and the store redis and redis-strict reserve their ranges
	// from, so that a Redis that loses its data costs a gap, never a
	// repeat. It is a URL:
	//
	//	postgres://user:password@host:5432/db?sslmode=disable   PostgreSQL (or postgresql://)
	//	mysql://user:password@host:3306/db                      MySQL 8, MariaDB 10.5 or later
	//
	// The ledger's table is created when a Build first opens it. Without
	// a ledger, redis keeps its counters in Redis alone, which must then
	// run with appendonly yes and appendfsync always, and redis-strict
	// needs a path and single_host.
	Ledger string `yaml:"ledger"`

	// Table is the ledger's table, optionally qualified by a schema
	// ("billing.sn_ledger"): letters, digits and "_". Default: sn_ledger.
	Table string `yaml:"table"`

	// Replication says which failovers of a SQL ledger's server are
	// accepted: by default a server that could have a standby that is not
	// synchronous is refused when the ledger is opened and at every write,
	// for a failover to it hands out numbers again
	// (sqlseq.Store.CheckReplication).
	// "single-server" declares that the server never fails over;
	// "accept-async-failover-loss" accepts that risk by name.
	Replication string `yaml:"replication"`

	// SingleHost declares that one host alone uses the Redis of a
	// redis-strict sequence, so that the bbolt file at Path, which only
	// that host sees, may back its counter. Without a ledger,
	// redis-strict is refused unless it is set.
	SingleHost bool `yaml:"single_host"`

	// Replicas is how many Redis replicas must have each range a redis or
	// redis-strict sequence writes before a number from it is used
	// (Redis's WAIT, in the same round trip), so that a failover to a
	// replica that lagged cannot issue the numbers again. Numbers that
	// too few replicas acknowledged in time are a gap, and the call fails.
	Replicas int `yaml:"replicas"`

	// ReplicaTimeout bounds the wait for Replicas, as a Go duration.
	// Default: 1s.
	ReplicaTimeout string `yaml:"replica_timeout"`

	// Prefix is put before every key the backend writes in Redis, or in
	// etcd (the etcd backend given endpoints).
	Prefix string `yaml:"prefix"`

	// Endpoints are the client URLs or host:port of an etcd cluster's
	// members: the etcd backend's cluster, as a ledger URL names it
	// (etcd://host1:2379,host2:2379). Username and Password are etcd's
	// authentication; TLSCA, TLSCert and TLSKey the files of TLS (any of
	// them, or an https endpoint, makes it etcds).
	Endpoints []string `yaml:"endpoints"`
	Username  string   `yaml:"username"`
	Password  string   `yaml:"password"`
	TLSCA     string   `yaml:"tls_ca"`
	TLSCert   string   `yaml:"tls_cert"`
	TLSKey    string   `yaml:"tls_key"`

	// Layout, Epoch and Unit are a snowflake sequence's layout: "twitter"
	// (the default), "sonyflake", or the bits of time, worker and
	// sequence written "41/10/12" with the Epoch it counts time from (a
	// date such as 2024-01-01, not in the future) and the Unit of its
	// time (a Go duration of at least 1µs; default 1ms).
	Layout string `yaml:"layout"`
	Epoch  string `yaml:"epoch"`
	Unit   string `yaml:"unit"`

	// Worker fixes the worker id of a snowflake sequence instead of
	// leasing one; it is refused unless SingleProcess declares that one
	// process alone issues with it, and that its clock does not go back
	// across a restart.
	Worker        *int64 `yaml:"worker"`
	SingleProcess bool   `yaml:"single_process"`
}

// decode returns t's sequence as this package's drivers read it, and the
// errors of its fields' types.
func decode(t *config.Target) (seq, error) {
	s := seq{Sequence: t.Sequence}
	err := t.Decode(&s)
	if err == nil && len(s.Endpoints) > 0 {
		if s.Ledger != "" {
			return s, &config.Error{Field: "endpoints", Err: errors.New("give an etcd cluster as endpoints or as a ledger URL, not both")}
		}
		s.Ledger = etcdURLOf(s)
	}
	return s, err
}

// segmentFields are the fields of a config.Sequence that a segment reads.
var segmentFields = config.SegmentFields()

// fetchTimeout returns the fetch timeout of s.
func fetchTimeout(s seq) time.Duration {
	if d, err := time.ParseDuration(s.FetchTimeout); err == nil && d > 0 {
		return d
	}
	return sequence.DefaultFetchTimeout // it also bounds the first PING of a Redis client
}

// missing reports a required field left empty.
func missing(field, backend, what string) error {
	return &config.Error{Field: field, Err: fmt.Errorf("the %s backend needs %s (set %s here or in store)", backend, what, field)}
}
