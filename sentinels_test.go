package sn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/wire"
)

// sn's sentinels are its own values, and every path to them agrees: an
// error of the engine matches them, the wire's code of each stands for the
// value itself (what a client's error unwraps to), and an error a
// middleware made by wrapping the value is classified as the engine's is.
func TestSentinels(t *testing.T) {
	g := mustNew(t, `A-@<seq, width=2>-@<c, var>`)
	ctx := context.Background()
	_, engineErr := g.Issue(ctx, sn.Request{N: sn.MaxN + 1})
	if !errors.Is(engineErr, sn.ErrTooMany) {
		t.Fatalf("Issue(N: MaxN+1) = %v, does not match sn.ErrTooMany", engineErr)
	}
	if errors.Is(engineErr, sn.ErrVarMissing) {
		t.Errorf("%v matches sn.ErrVarMissing too", engineErr)
	}
	for _, tt := range []struct {
		code wire.Code
		err  error
	}{
		{wire.CodeAmbiguous, sn.ErrAmbiguous},
		{wire.CodeVarMissing, sn.ErrVarMissing},
		{wire.CodeVarInvalid, sn.ErrVarInvalid},
		{wire.CodeInstant, sn.ErrInstant},
		{wire.CodeTooMany, sn.ErrTooMany},
		{wire.CodeInvalidNumber, sn.ErrInvalidNumber},
		{wire.CodeOverflow, sn.ErrOverflow},
	} {
		if got := tt.code.Err(); got != tt.err {
			t.Errorf("%s.Err() = %#v, want sn's value %v", tt.code, got, tt.err)
		}
		if code, _ := wire.Classify(fmt.Errorf("middleware: %w", tt.err)); code != tt.code {
			t.Errorf("Classify(an error wrapping %v) = %s, want %s", tt.err, code, tt.code)
		}
	}
	if code, _ := wire.Classify(engineErr); code != wire.CodeTooMany {
		t.Errorf("Classify(%v) = %s, want %s", engineErr, code, wire.CodeTooMany)
	}
}
