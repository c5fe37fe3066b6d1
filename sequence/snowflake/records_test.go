package snowflake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/snowflake"
)

// The record leaser over a map: the promises of a Leaser. Every store
// with records runs the same suite over its own (sqlseq).
func TestRecordLeaser(t *testing.T) {
	stores := map[*testing.T]record.Store{}
	sequencetest.RunLeaser(t, func(t *testing.T, name string) snowflake.Leaser {
		s, ok := stores[t]
		if !ok {
			s = record.NewMemory()
			stores[t] = s
		}
		l, err := snowflake.NewRecordLeaser(s, name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, 50*time.Millisecond)
}

// Names are kept apart whatever bytes they hold: "a" and "a/id" are two
// series (their layouts differ, and neither refuses the other's), and an
// empty name or one of 256 bytes is refused.
func TestRecordLeaserNames(t *testing.T) {
	s := record.NewMemory()
	for i, name := range []string{"a", "a/id", "a/layout"} {
		l, err := snowflake.NewRecordLeaser(s, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Lease(t.Context(), sequencetest.LayoutOf(int64(2)<<i), time.Minute); err != nil {
			t.Errorf("series %q: %v", name, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 256)} {
		if _, err := snowflake.NewRecordLeaser(s, bad); !errors.Is(err, sequence.ErrInvalidArgument) {
			t.Errorf("name of %d bytes: %v", len(bad), err)
		}
	}
}
