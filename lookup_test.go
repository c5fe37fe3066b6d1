package sn_test

import "github.com/sngen/sn/checksum"

func lookupAlgo(name string) (checksum.Algorithm, error) { return checksum.Lookup(name) }
