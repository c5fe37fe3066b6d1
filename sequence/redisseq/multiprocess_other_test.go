//go:build !linux

package redisseq_test

import (
	"fmt"
	"os"
)

// childEnv names the job of a child of the multi-process tests, which need
// a system-wide monotonic clock and run on Linux only.
const childEnv = "REDISSEQ_TEST_CHILD"

func runChild(string) int {
	fmt.Fprintln(os.Stderr, "the multi-process tests run on Linux only")
	return 2
}
