// Command sn issues, checks and explains business numbers made from sn
// templates. Run "sn help" for its usage.
package main

import (
	"os"

	_ "time/tzdata" // tz= works on machines without a zoneinfo database

	_ "github.com/sngen/sn/backend" // the bolt, redis and redis-strict stores
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
