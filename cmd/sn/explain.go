package main

import "github.com/sngen/sn"

// maxPreview is the most samples preview prints: [sn.Generator.Preview]
// returns them all at once.
const maxPreview = 100_000

func cmdExplain(e *env, args []string) error {
	f := newFlags("explain")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	t, pos, err := f.target(pos, placeholderStore)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(f.cmd, "unexpected argument %q", pos[0])
	}
	e.out.WriteString(t.generator().Explain().String())
	return nil
}

func cmdPreview(e *env, args []string) error {
	f := newFlags("preview")
	f.count(3)
	f.call()
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	if f.n < 0 || f.n > maxPreview {
		return usagef(f.cmd, "-n %d: want 0 to %d (preview holds its samples in memory; sn next issues more)", f.n, maxPreview)
	}
	t, pos, err := f.target(pos, placeholderStore)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(f.cmd, "unexpected argument %q", pos[0])
	}
	var nums []string
	if f.n > 0 {
		nums, err = t.generator().Preview(e.ctx, sn.Request{N: f.n, At: f.at, Vars: f.vars})
	}
	for _, s := range nums {
		e.out.WriteString(s)
		e.out.WriteByte('\n')
	}
	return err
}
