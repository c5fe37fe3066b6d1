package snowflake_test

import (
	"testing"
	"time"

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
