package redisseq

import (
	"context"
	"strconv"
	"strings"

	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/record"
)

// The claims of idempotency keys of a Redis without a ledger are records
// (see claim.Records), timed by the server's clock. An earlier release
// kept each in a hash of its own,
//
//	P{claim:ID}  hash  digest, token, answer, until (Unix microseconds), done
//
// which moves into the records when a process claims ID and finds no
// record of it, and is deleted.

// claimKey is the Redis key an earlier release kept the claim of id at.
func claimKey(prefix, id string) string { return redisKey(prefix, "claim:"+id, "") }

// migrateClaim moves the claim of the record key k ("i/" and its id) that
// an earlier release kept, if there is one.
func (r *redisRecords) migrateClaim(ctx context.Context, k string) error {
	id, ok := strings.CutPrefix(k, "i/")
	if !ok {
		return nil
	}
	old := claimKey(r.prefix, id)
	f, err := r.rdb.HGetAll(ctx, old).Result()
	if err != nil {
		return classify("read a claim of an earlier release", old, err)
	}
	if len(f) == 0 {
		return nil
	}
	until, err := strconv.ParseInt(f["until"], 10, 64)
	if err != nil {
		return newError(ErrCorrupt, nil, "key %s holds the claim's time %q", old, f["until"])
	}
	m := claim.Memo{Digest: f["digest"], Token: f["token"], Answer: f["answer"], Until: until, Done: f["done"] == "1"}
	raw := *r
	raw.raw = true
	if _, err := raw.Commit(ctx, []record.Record{{Key: k}}, claim.Ops(id, m)); err != nil {
		return err
	}
	return classify("delete a claim of an earlier release", old, r.rdb.Del(ctx, old).Err())
}
