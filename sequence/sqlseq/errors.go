package sqlseq

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"syscall"

	"github.com/sngen/sn/sequence"
)

// The errors of the drivers are told apart here and nowhere else. sqlseq
// links no driver: a PostgreSQL error (pgx's *pgconn.PgError) is known by
// its SQLState method, a MySQL error (go-sql-driver's *mysql.MySQLError) by
// its message, "Error 1213 (40001): ...".

// sqlState returns the SQLSTATE code of a database error, or "".
func sqlState(err error) string {
	if err == nil {
		return ""
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		return pg.SQLState()
	}
	if m := mysqlError.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return ""
}

// mysqlNumber returns the number of a MySQL error, or "".
func mysqlNumber(err error) string {
	if err == nil {
		return ""
	}
	for ; err != nil; err = errors.Unwrap(err) { // the driver's, under the Store's words
		if m := mysqlError.FindStringSubmatch(err.Error()); m != nil {
			return m[1]
		}
	}
	return ""
}

var mysqlError = regexp.MustCompile(`^Error (\d+)(?: \(([0-9A-Z]{5})\))?:`)

// transient reports whether a statement that failed with err may succeed
// if tried again: the database was serializing or broke a deadlock, or the
// connection was lost.
func transient(err error) bool {
	if errors.Is(err, errNoSyncStandby) {
		return true
	}
	switch state := sqlState(err); {
	case state == "40001", state == "40P01": // serialization failure, deadlock
		return true
	case len(state) == 5 && state[:2] == "08": // connection exception
		return true
	case state == "57P01", state == "57P02", state == "57P03": // shutting down, starting up
		return true
	}
	switch mysqlNumber(err) {
	case "1205", "1213", "2006", "2013": // lock wait timeout, deadlock, gone away, lost
		return true
	}
	return unreachable(err)
}

// unreachable reports whether err is the connection's, not the
// statement's.
func unreachable(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return true
	}
	return err.Error() == "invalid connection" // go-sql-driver's ErrInvalidConn
}

// classify wraps the error of a statement that will not be tried again:
// ErrUnavailable when the database could not be reached or kept refusing
// for a transient reason (or ctx ended first), the database's own error
// otherwise.
func classify(what, table string, err error, ctx context.Context) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || transient(err) {
		return fmt.Errorf("sqlseq: %s (table %s): %w: %w", what, table, sequence.ErrUnavailable, err)
	}
	return fmt.Errorf("sqlseq: %s (table %s): %w", what, table, err)
}
