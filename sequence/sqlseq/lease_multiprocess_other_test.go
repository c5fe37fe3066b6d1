//go:build !linux

package sqlseq_test

import (
	"fmt"
	"os"
)

// leaseEnv carries the job of a child process of TestLeaserMultiProcess,
// which runs on Linux only.
const leaseEnv = "SQLSEQ_TEST_LEASE_CHILD"

func runLeaseChild(string) int {
	fmt.Fprintln(os.Stderr, "the multi-process lease test runs on Linux only")
	return 2
}
