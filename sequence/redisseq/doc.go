// Package redisseq is the Redis backend of package sequence, built on
// github.com/redis/go-redis/v9. Redis is a cache in front of a ledger: a
// durable allocator shared by every machine (package sqlseq's Store on
// PostgreSQL or MySQL). Redis holds each key's current range, reserved from
// the ledger in chunks; a range is refilled from the ledger above
// everything it ever handed out, and only ever installed above the one in
// Redis, so Redis losing its data (an empty restart, FLUSHALL) costs a gap,
// never a repeat, in any process on any machine. It offers two ways to
// issue numbers:
//
//   - [Allocator] ([NewAllocator]), a [sequence.Allocator] that takes a
//     block from the range with one script call. Put a [sequence.Segment]
//     in front of it and almost every number comes from memory: the
//     fastest choice, with numbers unique but only roughly in order across
//     processes.
//   - [Counter], a strict [sequence.Gen]: "first come, first served" across
//     every process. Concurrent calls in one process are coalesced into one
//     round trip (group commit), in the order they arrived.
//
// The ledger must be one that every machine shares: a store per machine (a
// bbolt file) behind a shared Redis repeats numbers once Redis loses its
// data, since each machine's store knows only its own ranges.
// [NewRedisOnlyAllocator] keeps counters in Redis alone, as an explicit
// choice that needs a Redis with appendonly yes, appendfsync always and maxmemory-policy noeviction,
// which it checks.
//
// [Lock], the distributed lock Counter refills under, is usable on its own.
//
// Everything takes a [redis.UniversalClient], so a single Redis, Sentinel
// and Redis Cluster all work. Each Lua script is declared once with
// [redis.NewScript] and run with Run (EVALSHA, falling back to EVAL after a
// SCRIPT FLUSH or a restart), and touches exactly one key. Lua numbers are
// doubles, exact only up to 2^53, so the scripts compare counters as decimal
// strings (by length, then byte by byte), do arithmetic on a counter in Lua
// only while it has at most 15 digits, and leave it to Redis's own INCRBY and
// HINCRBY, exact in int64, above that. Counters are exact up to
// math.MaxInt64, where they end with [sequence.ErrExhausted].
//
// # Replication
//
// Redis replicates asynchronously, so a failover (Sentinel, Cluster) to a
// replica that had not received the last writes moves counters back, and
// numbers issued just before it would be issued again. Set
// [AllocatorOptions.Replicas] or [CounterOptions.Replicas] to the number of
// replicas a failover may promote: every write is then followed, in the same
// round trip, by WAIT, and no block or number is used before the replicas
// have it. A single Redis without replicas needs none of this for the
// Counter (its durable allocator covers a total loss of Redis's data, but
// not a restart from an older snapshot: see [Counter]); the Allocator
// alone needs appendfsync always to survive a restart.
//
// # Key layout
//
// For a counter key K and a prefix P (default "sn:"), let E be K with "%",
// "{" and "}" percent-escaped ("%25", "%7B", "%7D"; every other byte is kept,
// including NUL and non-UTF-8 bytes). The escaped prefix is P with the same
// escaping. Then:
//
//	P{E}        string  Redis-only Allocator: the last number reserved for K
//	                    ("0" or absent before the first Allocate).
//	P{E}:range  hash    Allocator and Counter over a ledger: cur, the last
//	                    number issued; max, the last number of the current
//	                    range (spent when cur >= max); ledger, the identity
//	                    of the ledger it was reserved from (a
//	                    its StoreID): a process whose ledger has
//	                    another is refused ([ErrOtherLedger]).
//	P{E}:lock   string  the refill lock's random token, with a TTL.
//	P{E}:epoch  string  Redis-only Allocator: a random marker written with the
//	                    counter, in its slot; its loss means the server (or
//	                    the shard holding K) lost its data.
//
// The records of a Redis without a ledger (package record; the catalog
// among them) share one slot, under a tag no key escapes to:
//
//	P{%records}:v    hash    record key -> value
//	P{%records}:n    hash    record key -> version
//	P{%records}:i    zset    every record key, for scans in byte order
//	P{%records}:seq  string  the last version given
//
// The escaping is injective and leaves no brace in E, so two different
// keys never share a Redis key, and "{E}" is the key's Redis Cluster hash
// tag: all the Redis keys of one counter key live in one slot. (For the
// empty key the tag is "{}", which Redis ignores; that is harmless, as no
// command or script touches two keys.) For example the key "order:{2024}"
// is stored at "sn:{order:%7B2024%7D}".
//
// # Errors
//
// Every error message starts with "redisseq: " and names the Redis key.
// Errors wrap the sentinels callers branch on: [sequence.ErrUnavailable]
// when Redis cannot be reached in time (always with the cause, such as a
// refused connection or a deadline, also wrapped), [ErrWrongType] when a
// key holds a foreign value of another type, [ErrCorrupt] when it holds a
// value this package never writes, [sequence.ErrExhausted] at
// math.MaxInt64, [sequence.ErrInvalidArgument] for a bad n or floor.
// MOVED, ASK, TRYAGAIN and CLUSTERDOWN replies are retried by the cluster
// client; if they still come through they are [sequence.ErrUnavailable].
package redisseq
