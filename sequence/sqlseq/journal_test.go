package sqlseq_test

import (
	"testing"

	"github.com/sngen/sn/sequence/sequencetest"
	"github.com/sngen/sn/sequence/sqlseq"
)

func TestJournal(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			sequencetest.RunJournal(t, newStore(t, b, b.open(t), sqlseq.Options{}))
		})
	}
}
