// Package claim keeps the claims of idempotency keys: a caller that did
// not hear back (a timeout, a cut connection) asks again with the same
// key and gets the numbers it was given, not new ones, from any process
// that shares the store.
//
// A [Replayer] is the promise; [Records] keeps it in any store's records
// (package record), written once for every store; [Of] finds a
// Generator's. [Memo] is a claim as a store keeps it.
package claim
