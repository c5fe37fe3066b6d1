package config_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sngen/sn"
	"github.com/sngen/sn/config"
	"github.com/sngen/sn/sequence"
)

// decodeRefuses checks that data, in format, is refused with the error
// want: by Decode, or for a mistake in a backend's fields, which its
// driver reads, by Validate.
func decodeRefuses(t *testing.T, data, format, want string) {
	t.Helper()
	c, err := config.Decode([]byte(data), format)
	if err == nil {
		err = c.Validate()
	}
	if err == nil {
		t.Fatalf("Decode and Validate = %+v, want error %q", c, want)
	}
	if got := err.Error(); got != want {
		t.Errorf("error:\n got %s\nwant %s", got, want)
	}
	if !errors.Is(err, config.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
}

// tpl is a config of one template in the default store.
func tpl(text string) map[string]config.Template {
	return map[string]config.Template{"orders": {Template: text}}
}

// newError returns the message of sn.New's error for text, compiled as
// Validate compiles it: config passes it on.
func newError(t *testing.T, text string) string {
	t.Helper()
	_, err := sn.New(text, sn.WithSequence("seq", sequence.NewMemory()))
	if err == nil {
		t.Fatalf("sn.New(%s): nil error", text)
	}
	return err.Error()
}

// floorError returns the message of sn.Generator.Floor for a template
// whose counter key varies per call: the reason config gives for refusing
// its floor.
func floorError(t *testing.T, text string) string {
	t.Helper()
	err := sn.MustNew(text, sn.WithSequence("seq", sequence.NewMemory())).Floor(context.Background(), 10)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Floor on %s = %v, want errors.ErrUnsupported", text, err)
	}
	return err.Error()
}

// boltFields are the fields the bolt backend reads, and so a balanced
// sequence of bolt members.
var boltFields = []string{"path", "step", "min_step", "max_step", "prefetch", "target", "fetch_timeout", "idle"}
