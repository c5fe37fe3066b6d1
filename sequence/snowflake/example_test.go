package snowflake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/sequence/snowflake"
)

func ExampleLayout_Decompose() {
	// A fixed worker id and a fixed clock, for the example; in production,
	// lease the id: snowflake.Options{Leaser: redisseq.NewLeaser(rdb, nil)}.
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	g, err := snowflake.New(context.Background(), snowflake.Twitter, snowflake.Options{
		Worker: 7,
		Now:    func() time.Time { return at },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	id, _ := g.Next(context.Background(), "")
	d, _ := snowflake.Twitter.Decompose(id)
	fmt.Println(id)
	fmt.Println(d.Time.UTC(), "worker", d.Worker, "seq", d.Seq)
	fmt.Println("ends", snowflake.Twitter.End().UTC().Format(time.DateOnly), "limit", snowflake.Twitter.Limit(), "ids/s")
	// Output:
	// 2124835351557074944
	// 2026-11-23 12:00:00 +0000 UTC worker 7 seq 0
	// ends 2080-07-10 limit 4.096e+06 ids/s
}
