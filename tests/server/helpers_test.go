package server_test

import "github.com/sngen/sn/internal/servertest"

// The helpers of the tests, in package servertest, which module tests
// shares.
var (
	start       = servertest.Start
	startConfig = servertest.StartConfig
	call        = servertest.Call
)

const testToken = servertest.Token
