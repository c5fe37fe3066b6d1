package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sngen/sn"
)

func cmdParse(e *env, args []string) error {
	f := newFlags("parse")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	t, numbers, err := f.target(pos, placeholderStore)
	if err != nil {
		return err
	}
	g := t.generator()
	bad := 0
	err = eachNumber(e, numbers, func(s string) error {
		p, err := g.Parse(s)
		if err != nil {
			bad++
			fmt.Fprintf(e.out, "%s: %s\n", s, reason(err))
		} else {
			fmt.Fprintf(e.out, "%s: %s\n", s, describeParsed(p))
		}
		return e.out.Flush()
	})
	if err == nil && bad > 0 {
		return errInvalid
	}
	return err
}

// describeParsed prints what a number reads back as: each counter and
// number, then the variables.
//
//	counter "SN|unit=6541" number 12; area="010" unit="6541"
func describeParsed(p sn.Parsed) string {
	var draws []string
	for _, d := range p.Draws {
		draws = append(draws, fmt.Sprintf("counter %s number %d", strconv.Quote(d.Key), d.Seq))
	}
	s := strings.Join(draws, ", ")
	names := make([]string, 0, len(p.Vars))
	for k := range p.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	var vars []string
	for _, k := range names {
		vars = append(vars, k+"="+strconv.Quote(p.Vars[k]))
	}
	if len(vars) > 0 {
		s += "; " + strings.Join(vars, " ")
	}
	return s
}
