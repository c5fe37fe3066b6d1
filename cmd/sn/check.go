package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn"
)

func cmdCheck(e *env, args []string) error {
	f := newFlags("check")
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
	check := func(s string) error {
		if err := g.Validate(s); err != nil {
			bad++
			fmt.Fprintf(e.out, "%s: %s\n", s, reason(err))
		} else {
			fmt.Fprintf(e.out, "%s: ok\n", s)
		}
		return e.out.Flush()
	}
	if len(numbers) > 0 {
		for _, s := range numbers {
			if err := check(s); err != nil {
				return err
			}
		}
	} else {
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s := strings.TrimSpace(sc.Text())
			if s == "" {
				continue
			}
			if err := check(s); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
	}
	if bad > 0 {
		return errInvalid
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
