package sqlseq_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"time"

	"github.com/sngen/sn/sequence/snowflake"
	"github.com/sngen/sn/sequence/sqlseq"
)

// The examples need a database at db.internal, so they are compiled but
// not run (they have no Output comment). The tests run the same code
// against servers they start themselves.

// Snowflake ids whose worker id is leased from the ledger's database:
// every process that shares the database gets an id no other live process
// holds, and gives it back on Close.
func ExampleNewLeaser() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://sn@db.internal/orders")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := sqlseq.New(db, sqlseq.Postgres, sqlseq.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil { // the table of leases too
		log.Fatal(err)
	}

	leaser, err := sqlseq.NewLeaser(store, sqlseq.LeaserOptions{})
	if err != nil {
		log.Fatal(err)
	}
	gen, err := snowflake.New(ctx, snowflake.Twitter, snowflake.Options{
		Leaser: leaser,
		TTL:    10 * time.Second, // renewed every TTL/4
	})
	if err != nil {
		log.Fatal(err)
	}
	defer gen.Close()
	id, err := gen.Next(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, "from worker", gen.Worker())
}
