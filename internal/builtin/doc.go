// Package builtin holds the parts every template can use without
// registering them — date, checksum and random — as the engine reads them:
// a date's fields and period, a checksum's algorithm, a random part's
// alphabet. They are expressions of package expression, in the registry
// of package sn under their names; only the engine needs more of them.
package builtin
