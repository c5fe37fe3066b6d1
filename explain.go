package sn

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/internal/engine"
)

// Explanation describes a compiled template: its parts, the order they are
// evaluated in (sequences are drawn before any part is evaluated), the
// counter key of each sequence, the longest number and the regular
// expression of its numbers. [Generator.Explain] returns it; its
// String method prints it for people (sn explain).
type Explanation struct {
	// Template is the canonical template text.
	Template string
	// Parts are the template's parts in template position.
	Parts []PartInfo
	// Eval lists indexes into Parts in evaluation order.
	Eval []int
	// MaxLen is [Generator.MaxLen].
	MaxLen int
	// Regexp is [Generator.Regexp].
	Regexp string
}

// PartInfo describes one part of a template.
type PartInfo struct {
	// Source is the part as canonical template text.
	Source string
	// Name is the part's name ("seq", "date", a variable name), or "text".
	Name string
	// Kind is "text", "setter", "variable", "sequence" or "expression".
	Kind string
	// Offset is the part's byte offset in the template.
	Offset int
	// Order is the part's evaluation stage.
	Order expression.Order
	// MaxLen is the part's longest output, -1 when unbounded.
	MaxLen int
	// Group is the part's named group in Regexp, "" for text.
	Group string
	// Pattern is the part's regular expression.
	Pattern string
	// Key is, for a sequence, its counter key with placeholders for what
	// varies per call, such as "SN|unit=<unit>|<yyyy-MM-dd>". See the
	// package documentation for how the key is made.
	Key string
	// Max is, for a sequence of a fixed width, the largest number the
	// width prints (99999999 for width=8); 0 for none. sn series shows how
	// much of it a store's counters have used.
	Max int64
}

// Explain describes the compiled template.
func (g *Generator) Explain() Explanation {
	parts := g.plan.Parts()
	e := Explanation{Template: g.String(), MaxLen: g.MaxLen(), Regexp: g.Regexp()}
	for i := range parts {
		p := &parts[i]
		info := PartInfo{
			Source: p.Source, Name: p.Name, Kind: p.Kind.String(), Offset: p.Offset, Order: p.Order(),
			MaxLen: p.MaxLen(), Group: p.Group(), Pattern: p.Pattern(),
		}
		if p.Kind == engine.Text {
			info.Name, info.Source = "text", p.Lit
		}
		if p.Kind == engine.Seq {
			info.Key, info.Max = g.plan.KeyPattern(i), p.MaxSeq()
		}
		e.Parts = append(e.Parts, info)
		e.Eval = append(e.Eval, i)
	}
	slices.SortStableFunc(e.Eval, func(a, b int) int { return int(e.Parts[a].Order) - int(e.Parts[b].Order) })
	return e
}

// String prints the explanation as aligned text.
func (e Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "template:   %s\n", e.Template)
	step := make([]int, len(e.Parts))
	for n, i := range e.Eval {
		step[i] = n + 1
	}
	b.WriteString("parts (in template order; eval is the evaluation step):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\toffset\tkind\torder\teval\tmaxlen\tpart")
	for i, p := range e.Parts {
		src := p.Source
		if p.Kind == "text" {
			src = strconv.Quote(src)
		}
		ml := strconv.Itoa(p.MaxLen)
		if p.MaxLen < 0 {
			ml = "-"
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%d\t%s\t%s\n", i+1, p.Offset, p.Kind, p.Order, step[i], ml, src)
	}
	tw.Flush()
	for _, p := range e.Parts {
		if p.Kind == "sequence" {
			fmt.Fprintf(&b, "counter key of %s at offset %d: %s\n", p.Name, p.Offset, p.Key)
			if p.Max > 0 {
				fmt.Fprintf(&b, "numbers of %s at offset %d: 1 to %d, then overflow (sn series shows how much is used)\n", p.Name, p.Offset, p.Max)
			}
		}
	}
	if e.MaxLen < 0 {
		b.WriteString("max length: unbounded\n")
	} else {
		fmt.Fprintf(&b, "max length: %d\n", e.MaxLen)
	}
	fmt.Fprintf(&b, "regexp:     %s\n", e.Regexp)
	return b.String()
}
