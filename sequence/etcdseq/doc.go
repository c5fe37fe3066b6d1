// Package etcdseq keeps sn's ledger in etcd: every counter is a key of the
// cluster, and a range of numbers is reserved by a compare-and-swap
// transaction on that key's revision, which etcd's Raft log makes durable
// on a majority of members before it answers. A range etcd acknowledged
// survives the loss of any minority of members, a leader's crash and an
// election; nothing is ever reserved twice.
//
//	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://etcd1:2379", "http://etcd2:2379", "http://etcd3:2379"}})
//	store, err := etcdseq.New(cli, etcdseq.Options{})
//	seg, err := sequence.NewSegment(store, sequence.SegmentOptions{})
//
// A [Store] is a [sequence.Allocator], [sequence.Floorer],
// [sequence.Returner], [sequence.Expirer], has an identity
// ([Store.StoreID]),
// [journal.Keeper],
// [journal.Keeper], [sequence.Pinger] and a [record.Holder]: its records
// keep the catalog of series (package catalog), named records
// ([sequence.Remember]) and the claims of idempotency keys
// ([claim.Records]). Its clock, by which counters
// of an hour or shorter expire, is kept in the cluster: the clock of its
// records. Put a
// [sequence.Segment] in front of it: a range is one round trip to the
// leader and one fsync on a majority, so numbers should come from memory.
//
// # Failures
//
// A request that etcd does not answer within Options.AttemptTimeout is tried
// again, on another member if the client has one, until Options.Timeout has
// passed since the call began; then the call fails with an error wrapping
// [sequence.ErrUnavailable]. With a majority of members down nothing can be
// reserved and every call fails so, within Options.Timeout; it works again
// once a majority is back. A transaction whose answer was lost may have
// been applied: the range it reserved is then never issued, a gap, and the
// next attempt reads the counter again and reserves above it.
//
// # Keys
//
// Everything the Store writes is under Options.Prefix ("sn/" by default):
// counters under "n/", their expiry deadlines under "x/", records under
// "r/", the catalog under "cat/", worker-id leases under "w/", the store's
// identity at "id" and its clock at "clock"; each counter's journal under
// "j/" (its key's length, "/", the key, "/", and the record's number in 20
// digits, JSON) with its head at "jh/" and the key ("number hash mark"),
// written in the transaction that changes the counter; the claims of
// idempotency keys under "i/", on a lease that outlives them. A counter's value is its high-water mark in
// decimal, followed, once a floor was raised, by a space and the highest
// floor.
package etcdseq
