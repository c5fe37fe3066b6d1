package expression_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sngen/sn/expression"
)

// weekday prints the call's day of the week, in upper or lower case.
type weekday struct{ upper bool }

func (w weekday) Append(dst []byte, c *expression.Context) ([]byte, error) {
	d := c.Time().Weekday().String()[:3]
	if w.upper {
		d = strings.ToUpper(d)
	}
	return append(dst, d...), nil
}
func (weekday) Order() expression.Order { return expression.Before }
func (weekday) MaxLen() int             { return 3 }
func (weekday) Pattern() string         { return `[A-Za-z]{3}` }

// newWeekday is the Factory: it checks the arguments once, at sn.New.
func newWeekday(args expression.Args) (expression.Expression, error) {
	if err := args.Check("case"); err != nil {
		return nil, err
	}
	c, err := args.OneOf("case", "lower", "lower", "upper")
	if err != nil {
		return nil, err
	}
	return weekday{upper: c == "upper"}, nil
}

// Writing a custom expression and testing it on its own with NewContext.
// Register it with sn.RegisterExpression("weekday", newWeekday).
func Example() {
	e, err := newWeekday(expression.Args{"case": "upper"})
	if err != nil {
		panic(err)
	}
	c := expression.NewContext(context.Background(), time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), nil)
	out, _ := e.Append([]byte("ORD-"), c)
	fmt.Println(string(out))

	_, err = newWeekday(expression.Args{"case": "title"})
	fmt.Println(err)
	// Output:
	// ORD-WED
	// case="title": want one of lower, upper
}

func ExampleArgs_Check() {
	err := expression.Args{"widht": "8"}.Check("width")
	fmt.Println(err)
	// Output: unknown argument "widht": did you mean width?
}
