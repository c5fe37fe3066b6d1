package sentinel

import (
	"errors"
	"fmt"
	"testing"
)

// A kind matches the value exported for it, and nothing else; before
// export (a program without package sn) it stands for itself.
func TestKind(t *testing.T) {
	defer func(saved [numKinds]error) { public = saved }(public)
	public = [numKinds]error{}
	if got := Panic.Public(); got != Panic {
		t.Errorf("Public before Export = %v, want the kind itself", got)
	}
	wrapped := fmt.Errorf("call: %w", Panic)
	value := errors.New(text[Panic])
	if errors.Is(wrapped, value) {
		t.Error("an error wrapping Panic matches a value that was not exported")
	}
	Export(Panic, value)
	if !errors.Is(wrapped, value) {
		t.Error("an error wrapping Panic does not match its exported value")
	}
	if errors.Is(fmt.Errorf("%w", TooMany), value) {
		t.Error("TooMany matches Panic's value")
	}
	if Panic.Public() != value {
		t.Error("Public after Export is not the exported value")
	}
	// An error made outside the engine wraps sn's value, not the kind.
	if !Matches(fmt.Errorf("middleware: %w", value), Panic) || !Matches(wrapped, Panic) {
		t.Error("Matches misses an error wrapping the value or the kind")
	}
	if Matches(fmt.Errorf("%w", TooMany), Panic) {
		t.Error("Matches(TooMany, Panic)")
	}
}

// Export refuses a value whose message is not the kind's.
func TestExportChecksMessage(t *testing.T) {
	defer func(saved [numKinds]error) { public = saved }(public)
	defer func() {
		if recover() == nil {
			t.Error("Export of a value with another message did not panic")
		}
	}()
	Export(Key, errors.New("sn: something else"))
}

// Every kind has a message.
func TestEveryKindHasText(t *testing.T) {
	for k := Template; k < numKinds; k++ {
		if text[k] == "" {
			t.Errorf("kind %d has no message", k)
		}
	}
}
