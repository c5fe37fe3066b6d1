package record_test

import (
	"testing"

	"github.com/sngen/sn/sequence/record"
	"github.com/sngen/sn/sequence/record/recordtest"
)

func TestMemory(t *testing.T) {
	s := record.NewMemory()
	recordtest.Run(t, func(where string) (record.Store, func(), error) {
		return s, func() {}, nil
	}, "")
}
