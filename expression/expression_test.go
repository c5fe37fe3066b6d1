package expression_test

import (
	"context"
	"testing"

	"github.com/sngen/sn/expression"
)

var ctx = context.Background()

func TestArgs(t *testing.T) {
	a := expression.Args{"width": "8", "mode": "x", "zz": "1"}
	if err := a.Check("width", "mode"); err == nil || err.Error() != `unknown argument "zz" (known: mode, width)` {
		t.Errorf("Check: %v", err)
	}
	if err := (expression.Args{"a": "1"}).Check(); err == nil || err.Error() != `unknown argument "a" (takes no arguments)` {
		t.Errorf("Check(): %v", err)
	}
	if n, err := a.Int("width", 0, 1, 19); n != 8 || err != nil {
		t.Errorf("Int = %d, %v", n, err)
	}
	if n, err := a.Int("missing", 5, 1, 19); n != 5 || err != nil {
		t.Errorf("Int default = %d, %v", n, err)
	}
	if _, err := a.Int("mode", 0, 1, 19); err == nil || err.Error() != `mode="x": want a whole number from 1 to 19` {
		t.Errorf("Int bad: %v", err)
	}
	if _, err := a.OneOf("mode", "a", "a", "b"); err == nil || err.Error() != `mode="x": want one of a, b` {
		t.Errorf("OneOf bad: %v", err)
	}
	if got := expression.Before.String() + expression.Normal.String() + expression.After.String() + expression.Order(9).String(); got != "BeforeNormalAfterOrder(9)" {
		t.Errorf("Order strings: %s", got)
	}
}
