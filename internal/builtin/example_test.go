package builtin_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/builtin"
)

func ExampleNewDate() {
	e, _ := builtin.NewDate(expression.Args{"format": "yyyy-MM-dd HH:mm", "tz": "Asia/Shanghai"})
	c := expression.NewContext(context.Background(), time.Date(2017, 3, 4, 16, 30, 0, 0, time.UTC), nil)
	out, _ := e.Append(nil, c)
	fmt.Println(string(out))
	// Output: 2017-03-05 00:30
}

func ExampleNewChecksum() {
	e, _ := builtin.NewChecksum(expression.Args{"algo": "luhn"})
	c := expression.NewContext(context.Background(), time.Time{}, nil).WithSeq(1024, "00001024")
	out, _ := e.Append(nil, c)
	fmt.Println(string(out))
	// Output: 9
}

func ExampleNewRandom() {
	r, _ := builtin.NewRandom(expression.Args{"width": "6", "alphabet": "A-Z0-9"})
	out, _ := r.Append(nil, expression.NewContext(context.Background(), time.Time{}, nil))
	fmt.Println(len(out), r.(expression.Patterner).Pattern())
	// Output: 6 [0-9A-Z]{6}
}
