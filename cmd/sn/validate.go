package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn"
)

func cmdValidate(e *env, args []string) error {
	f := newFlags("validate")
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
		if err := g.Validate(s); err != nil {
			bad++
			fmt.Fprintf(e.out, "%s: %s\n", s, reason(err))
		} else {
			fmt.Fprintf(e.out, "%s: ok\n", s)
		}
		return e.out.Flush()
	})
	if err == nil && bad > 0 {
		return errInvalid
	}
	return err
}

// eachNumber calls fn with each number of args, or when there is none with
// each non-empty line of stdin, trimmed.
func eachNumber(e *env, args []string, fn func(string) error) error {
	if len(args) > 0 {
		for _, s := range args {
			if err := fn(s); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(e.stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return nil
}

// reason says why a number is invalid, without repeating the number.
func reason(err error) string {
	var ve *sn.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	if ve.Part == "" {
		return fmt.Sprintf("invalid: %v", ve.Err)
	}
	return fmt.Sprintf("invalid %s (template offset %d): %v", ve.Part, ve.Offset, ve.Err)
}
