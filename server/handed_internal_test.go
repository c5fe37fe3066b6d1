package server

import (
	"fmt"
	"testing"

	"github.com/sngen/sn/sequence"
)

// The blocks a token's clients took are remembered in a table of the
// token's own: another token's clients, however many, push none of them
// out, while a token's own oldest client goes when it has too many. A
// receipt is the client's, and a release must lie in its blocks, in one
// or across adjacent ones.
func TestHandedBlocks(t *testing.T) {
	var h handedBlocks
	shop := handedKey{"order", "ORD-@<seq>-", "sn serve, token shop, for client 1"}
	receipt := h.add("sn serve, token shop", shop, sequence.Range{First: 1, Last: 20})
	if again := h.add("sn serve, token shop", shop, sequence.Range{First: 21, Last: 40}); again != receipt || len(receipt) < 16 {
		t.Fatalf("receipts %q and %q: want one, of 16 characters or more", receipt, again)
	}
	for i := range handedPerToken + 10 {
		h.add("sn serve, token evil", handedKey{"spam", "X-@<seq>", fmt.Sprintf("sn serve, token evil, for c%d", i)}, sequence.Range{First: int64(i + 1), Last: int64(i + 1)})
	}
	for _, c := range []struct {
		owner, receipt string
		r              sequence.Range
		known, covered bool
	}{
		{"sn serve, token shop", receipt, sequence.Range{First: 6, Last: 40}, true, true}, // across two blocks
		{"sn serve, token shop", receipt, sequence.Range{First: 21, Last: 40}, true, true},
		{"sn serve, token shop", receipt, sequence.Range{First: 6, Last: 41}, true, false}, // past its blocks
		{"sn serve, token shop", receipt, sequence.Range{First: 9, Last: 8}, true, false},
		{"sn serve, token shop", "guessed", sequence.Range{First: 6, Last: 40}, false, false},
		{"sn serve, token evil", receipt, sequence.Range{First: 6, Last: 40}, false, false}, // another token's table
	} {
		known, covered := h.check(c.owner, shop, c.receipt, c.r)
		if known != c.known || covered != c.covered {
			t.Errorf("%s, receipt %q, %v: known %v, covered %v; want %v, %v", c.owner, c.receipt, c.r, known, covered, c.known, c.covered)
		}
	}
	if n := len(h.tables["sn serve, token evil"].m); n != handedPerToken {
		t.Errorf("token evil's table holds %d clients, want %d", n, handedPerToken)
	}
	if _, covered := h.check("sn serve, token evil", handedKey{"spam", "X-@<seq>", "sn serve, token evil, for c0"}, "", sequence.Range{First: 1, Last: 1}); covered {
		t.Error("token evil's oldest client is still remembered past the table's size")
	}
	h.forget("sn serve, token shop", shop, 20)
	if known, covered := h.check("sn serve, token shop", shop, receipt, sequence.Range{First: 1, Last: 5}); !known || covered {
		t.Errorf("after closed up to 20: known %v, covered %v; want the receipt known and [1, 5] no longer the client's", known, covered)
	}
}
