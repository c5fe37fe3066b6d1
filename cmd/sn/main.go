// Command sn issues, checks and explains business numbers made from sn
// templates. Run "sn help" for its usage.
package main

import (
	"os"

	_ "time/tzdata" // tz= works on machines without a zoneinfo database
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
