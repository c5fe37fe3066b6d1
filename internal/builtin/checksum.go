package builtin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/expression"
)

// Checksum is the part "@<checksum, algo=NAME, over=seq|all>": check
// characters computed by a [checksum.Algorithm] over the sequence value
// exactly as printed, padding included (over=seq, the default), or over all
// the text printed before the part (over=all). It runs After the other parts.
// In a template with several sequence parts, over=seq checks the nearest
// one before the checksum, or else the first one after it.
type Checksum struct {
	Algo checksum.Algorithm
	// All is true for over=all.
	All bool
	app checksum.Appender
}

// NewChecksum is the [Factory] of the checksum part.
func NewChecksum(args expression.Args) (expression.Expression, error) {
	if err := args.Check("algo", "over"); err != nil {
		return nil, err
	}
	name, ok := args["algo"]
	if !ok {
		return nil, expression.Errorf("", "checksum needs algo=NAME (one of %s)", strings.Join(checksum.Names(), ", "))
	}
	alg, err := checksum.Lookup(name)
	if err != nil {
		return nil, expression.Errorf("algo", "algo=%q: unknown algorithm (one of %s)", name, strings.Join(checksum.Names(), ", "))
	}
	over, err := args.OneOf("over", "seq", "seq", "all")
	if err != nil {
		return nil, err
	}
	c := &Checksum{Algo: alg, All: over == "all"}
	c.app, _ = alg.(checksum.Appender)
	return c, nil
}

// ErrNoSeq means a checksum over=seq ran without a sequence value.
var ErrNoSeq = errors.New("expression: no sequence value to check")

// Payload returns what the check characters are computed over: the
// sequence value as printed, or everything printed before the part.
func (k *Checksum) Payload(c *expression.Context) ([]byte, error) {
	if k.All {
		return c.Printed(), nil
	}
	if t := c.SeqText(); t != nil {
		return t, nil
	}
	return nil, ErrNoSeq
}

// Append appends the check characters.
func (k *Checksum) Append(dst []byte, c *expression.Context) ([]byte, error) {
	p, err := k.Payload(c)
	if err != nil {
		return dst, err
	}
	if k.app != nil {
		return k.app.AppendCheck(dst, p)
	}
	s, err := k.Algo.Compute(string(p))
	if err != nil {
		return dst, err
	}
	return append(dst, s...), nil
}

// Order returns After.
func (*Checksum) Order() expression.Order { return expression.After }

// MaxLen returns the number of check characters.
func (k *Checksum) MaxLen() int { return k.Algo.Len() }

// Pattern returns the algorithm's pattern for its check characters.
func (k *Checksum) Pattern() string { return k.Algo.Pattern() }

// Check recomputes the check characters over the payload read back.
func (k *Checksum) Check(part string, c *expression.Context) error {
	p, err := k.Payload(c)
	if err != nil {
		return err
	}
	want, err := k.Algo.Compute(string(p))
	if err != nil {
		return err
	}
	if want != part {
		return fmt.Errorf("check %q is wrong for %q (%s)", part, p, k.Algo.Name())
	}
	return nil
}
