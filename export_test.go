package sn

// RequestDigest is requestDigest, for the tests of package sn_test that
// record a claim as an earlier release did.
var RequestDigest = requestDigest
