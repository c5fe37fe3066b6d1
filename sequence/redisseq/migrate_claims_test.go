package redisseq_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence/claim"
	"github.com/sngen/sn/sequence/redisseq"
)

// Claims answered by the previous release, each
// in its own hash P{claim:ID}, must be found by a retry after the upgrade.
// Control: an ordinary id; attacks: an id whose series starts with '#'
// (a template such as "#@<seq>"), and an id longer than a record key.
func TestMigrateClaims(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	ids := []string{"series\x00order-1", "#@<seq>\x00order-1", strings.Repeat("L", 600) + "\x00order-1"}
	for _, id := range ids {
		rdb.HSet(ctx, "sn:{claim:"+id+"}", "digest", "digest-1", "token", "tok", "answer", `["SN-000042"]`, "until", time.Now().AddDate(50, 0, 0).UnixMicro(), "done", "1")
	}
	a, err := redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i, id := range ids {
		c, err := claim.Of(a).Claim(ctx, id, "digest-1", "retry", time.Minute)
		t.Logf("id #%d (%.20q, %d bytes): %+v %v", i, id, len(id), c, err)
		if err != nil || c.Mine || c.Answer != `["SN-000042"]` {
			lost++
			t.Errorf("id %.20q answered by the previous release: a retry gets %+v, %v; want the answer", id, c, err)
		}
	}
	t.Logf("answers lost: %d of %d (control is id 0)", lost, len(ids))
}

// The previous release answered a call with a
// 2 MiB answer (within MaxAnswer); after the upgrade, a retry.
func TestMigrateBigAnswer(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.Persistent())
	rdb := srv.Client(t)
	big := `["` + strings.Repeat("X", 2<<20) + `"]`
	for _, id := range []string{"series\x00small", "series\x00big"} {
		ans := `["SN-1"]`
		if strings.HasSuffix(id, "big") {
			ans = big
		}
		rdb.HSet(ctx, "sn:{claim:"+id+"}", "digest", "digest-1", "token", "tok", "answer", ans, "until", time.Now().AddDate(50, 0, 0).UnixMicro(), "done", "1")
	}
	a, err := redisseq.NewRedisOnlyAllocator(rdb, redisseq.AllocatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"series\x00small", "series\x00big"} {
		for try := 0; try < 2; try++ {
			c, err := claim.Of(a).Claim(ctx, id, "digest-1", "retry", time.Minute)
			t.Logf("%q try %d: mine=%v answer %d bytes, err=%.200v", id, try, c.Mine, len(c.Answer), err)
			if err != nil || c.Mine || len(c.Answer) == 0 {
				t.Errorf("%q: a retry of a call the previous release answered: mine=%v, %v", id, c.Mine, err)
			}
		}
	}
}
