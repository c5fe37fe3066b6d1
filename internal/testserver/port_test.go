package testserver

import (
	"errors"
	"testing"
)

// OnFreePort and Rebind try again only when the port was taken, and at
// most BindAttempts times.
func TestBindRetries(t *testing.T) {
	other := errors.New("no binary")
	for _, tt := range []struct {
		name  string
		errs  []error // what start returns, call by call
		calls int
		want  error
	}{
		{"at once", []error{nil}, 1, nil},
		{"after two taken ports", []error{ErrPortTaken, ErrPortTaken, nil}, 3, nil},
		{"another error", []error{other}, 1, other},
		{"always taken", []error{ErrPortTaken, ErrPortTaken, ErrPortTaken, ErrPortTaken, ErrPortTaken, nil}, BindAttempts, ErrPortTaken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			next := func() error { calls++; return tt.errs[calls-1] }
			ports := map[int]bool{}
			err := OnFreePort("test", func(port int) error { ports[port] = true; return next() })
			if !errors.Is(err, tt.want) || calls != tt.calls || len(ports) == 0 {
				t.Errorf("OnFreePort: %v after %d calls on %d ports; want %v after %d", err, calls, len(ports), tt.want, tt.calls)
			}
			calls = 0
			if err := Rebind(next); !errors.Is(err, tt.want) || calls != tt.calls {
				t.Errorf("Rebind: %v after %d calls; want %v after %d", err, calls, tt.want, tt.calls)
			}
		})
	}
}
