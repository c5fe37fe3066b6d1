package sn_test

// Checks of Generator.Parse and of ErrAmbiguous witnesses on the templates
// of collision_test.go: TestCollision also
//   - parses every number it prints and compares the counter key and the
//     number with what the sequence was asked for and returned, and the
//     per-call variables of the counter key with those given;
//   - checks the witness of every template New refuses with ErrAmbiguous.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sngen/sn"
)

func init() {
	collParseHook = collCheckParse
	collRefuseHook = collCheckRefusal
}

func collIsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// collCheckParse checks g.Parse(number) against the call that printed it.
func collCheckParse(g *sn.Generator, t *collTemplate, number string, in *collInput) error {
	p, err := g.Parse(number)
	if err != nil {
		return fmt.Errorf("Parse(%q): %v", number, err)
	}
	if collIsNil(p) {
		return fmt.Errorf("Parse(%q) returned nil and no error", number)
	}
	if len(in.draws) == 1 {
		d := in.draws[0]
		if p.Key != d.key || p.Seq != d.seq {
			return fmt.Errorf("Parse(%q) = key %q, number %d; want key %q, number %d", number, p.Key, p.Seq, d.key, d.seq)
		}
	} else {
		if len(p.Draws) != len(in.draws) {
			return fmt.Errorf("Parse(%q) gives %d draws, want %d", number, len(p.Draws), len(in.draws))
		}
		for i, d := range in.draws {
			if p.Draws[i].Key != d.key || p.Draws[i].Seq != d.seq {
				return fmt.Errorf("Parse(%q).Draws[%d] = key %q, number %d; want key %q, number %d", number, i, p.Draws[i].Key, p.Draws[i].Seq, d.key, d.seq)
			}
		}
	}
	for _, name := range t.keyVars() {
		got, ok := p.Vars[name]
		if !ok || got != in.vars[name] {
			return fmt.Errorf("Parse(%q).Vars[%q] = %q (present: %v), want %q (a counter-key variable)", number, name, got, ok, in.vars[name])
		}
	}
	return nil
}

// collCheckRefusal checks the error of a refused template. For
// ErrAmbiguous, the witness must hold two inputs whose (key, number) draws
// differ and that both print Number: a failure when the witness is marked
// Verified or the template has no date and checksum parts (it can then be
// rendered by substitution). An unverified witness of another template may
// be one reading each of Number that its check characters or dates do not
// allow; one that does not check out is only counted and logged.
func collCheckRefusal(t *collTemplate, err error) collRefusal {
	r := collRefusal{simple: t.count(collDate) == 0 && t.count(collChecksum) == 0}
	if !errors.Is(err, sn.ErrAmbiguous) {
		return r
	}
	r.ambiguous = true
	problem, renderErr := collWitnessProblem(t, err)
	if problem == "" {
		problem = renderErr
	}
	switch verified := collVerified(err); {
	case problem == "":
		r.checked = true
	case verified:
		r.problem = "verified witness: " + problem
	case r.simple:
		r.problem = "unverified witness of a template without date or checksum: " + problem
	default:
		r.unrendered = "unverified witness: " + problem
	}
	return r
}

// collVerified reports whether the error's witness is marked verified.
func collVerified(err error) bool {
	var ae *sn.AmbiguityError
	return errors.As(err, &ae) && ae.Witness.Verified
}

// collWitnessProblem returns what is wrong with the error's witness
// (problem), and separately why its inputs do not render back to its Number
// (renderErr); both "" when all is well.
func collWitnessProblem(t *collTemplate, err error) (problem, renderErr string) {
	if !errors.Is(err, sn.ErrTemplate) {
		return "an ErrAmbiguous error that does not wrap ErrTemplate", ""
	}
	var ae *sn.AmbiguityError
	if !errors.As(err, &ae) || ae == nil {
		return "errors.As(err, *sn.AmbiguityError) fails", ""
	}
	if collIsNil(ae.Witness) {
		return "AmbiguityError without a Witness", ""
	}
	w := ae.Witness
	a, b := w.A, w.B
	ins := [2]struct {
		name  string
		seqs  []int64
		keys  []string
		input string
	}{}
	for i, in := range []sn.Input{a, b} {
		ins[i].name = string("AB"[i])
		for _, d := range in.Draws {
			ins[i].seqs = append(ins[i].seqs, d.Seq)
			ins[i].keys = append(ins[i].keys, d.Key)
		}
		ins[i].input = fmt.Sprintf("%s = {vars %v; at %s; seqs %v; keys %q}", ins[i].name, in.Vars, in.At, ins[i].seqs, ins[i].keys)
	}
	desc := fmt.Sprintf("witness %q: %s, %s", w.Number, ins[0].input, ins[1].input)
	nseq := t.count(collSeq)
	if len(a.Draws) != nseq || len(b.Draws) != nseq {
		return fmt.Sprintf("%s: want %d draws in each input (one per sequence part)", desc, nseq), ""
	}
	differ := false
	for i := range nseq {
		if a.Draws[i].Key != b.Draws[i].Key || a.Draws[i].Seq != b.Draws[i].Seq {
			differ = true
		}
	}
	if !differ {
		return desc + ": the two inputs draw the same (key, number) pairs: not a repeat", ""
	}
	// The counter key is a function of the template, the per-call ownerKey,
	// the key= variable and the reset period.
	seqIdx := 0
	for _, p := range t.parts {
		if p.kind != collSeq {
			continue
		}
		i := seqIdx
		seqIdx++
		var names []string
		for _, n := range t.keyVars() {
			if n == "ownerKey" || n == p.keyVar {
				names = append(names, n)
			}
		}
		sameInputs := p.reset == "" || a.At.Equal(b.At)
		diffVars := false
		for _, n := range names {
			if a.Vars[n] != b.Vars[n] {
				sameInputs, diffVars = false, true
			}
		}
		switch {
		case sameInputs && a.Draws[i].Key != b.Draws[i].Key:
			return fmt.Sprintf("%s: draw %d has two keys although what its key depends on is the same (per-call key variables %q, reset=%q)", desc, i, names, p.reset), ""
		case diffVars && a.Draws[i].Key == b.Draws[i].Key:
			return fmt.Sprintf("%s: draw %d has one key for different values of %s", desc, i, strings.Join(names, ", ")), ""
		}
	}
	for i, in := range []sn.Input{a, b} {
		got, err := t.render(in.Vars, in.At, ins[i].seqs)
		if err != nil {
			return "", fmt.Sprintf("%s: input %s cannot be printed: %v", desc, ins[i].name, err)
		}
		if got != w.Number {
			return "", fmt.Sprintf("%s: input %s prints %q", desc, ins[i].name, got)
		}
	}
	return "", ""
}

// TestCollisionAmbiguousKnown: templates that print one string for two
// (key, number) pairs through nothing but a variable or a sequence running
// into its neighbour must be refused with ErrAmbiguous and a witness that
// checks out; the other known repeaters must be refused, and a witness, if
// given, must check out.
func TestCollisionAmbiguousKnown(t *testing.T) {
	mustAmbiguous := map[string]bool{
		"@<area>@<seq>":            true,
		"1@<area>@<seq>":           true,
		"@<seq>@<area>":            true,
		"@<seq>@<seq>":             true,
		"@<seq>@<unit, chars=0-9>": true,
		"@<area, maxlen=2>@<seq, width=1, overflow=grow>":  true,
		"@<unit, chars=0-9>@<seq, width=2, overflow=grow>": true,
	}
	for _, src := range []string{
		"@<area>@<seq>",
		"1@<area>@<seq>",
		"@<seq>@<area>",
		"@<seq>@<seq>",
		"@<seq>@<unit, chars=0-9>",
		"@<area, maxlen=2>@<seq, width=1, overflow=grow>",
		"@<unit, chars=0-9>@<seq, width=2, overflow=grow>",
		"@<seq>@<date, format=yy>@<seq>",
		"@<date, format=yy>@<seq, width=3, reset=year>",
		"@<date, format=yyMM>@<seq, reset=month>",
		"@<ownerKey>@<seq, width=3, overflow=grow>",
		"@<code, chars=A-Z>@<area>-@<seq, width=2, key=code>",
		"@<seq>@<checksum, algo=damm>@<area, maxlen=2>@<code, chars=A-Z, maxlen=2>B5@@",
	} {
		tp, err := collParse(src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sn.New(tp.String(), sn.WithSequence("seq", &collGen{}))
		switch {
		case err == nil:
			t.Errorf("New(%s) accepted a template that prints repeats", src)
			continue
		case !errors.Is(err, sn.ErrAmbiguous):
			if mustAmbiguous[src] {
				t.Errorf("New(%s) = %v; want an error wrapping ErrAmbiguous", src, err)
			}
			continue
		}
		if r := collCheckRefusal(tp, err); r.problem != "" || r.unrendered != "" {
			t.Errorf("New(%s): %s%s\n\terror: %v", src, r.problem, r.unrendered, err)
		} else {
			var ae *sn.AmbiguityError
			errors.As(err, &ae)
			t.Logf("%s: %q", src, ae.Witness.Number)
		}
	}
}
