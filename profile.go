package sn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

// ErrProfile is wrapped by the error of [New] for a template that cannot
// meet the legal profile it declares ([WithProfile]), and by the error of
// a call that would break it: the error says which rule, and why.
var ErrProfile = errors.New("sn: template does not meet its profile")

// Profiles are the legal profiles [WithProfile] takes, each the rules a
// law sets for a series of invoice numbers, checked by [New] when it
// compiles the template:
//
//   - "gapless": every number of the series is issued, or voided with a
//     reason, and none is lost: each sequence draws one number at a time
//     in the caller's transaction or as a hold then committed or voided
//     (a [sequence.Continuous], sqlseq's Gapless), never from a block,
//     and keeps a journal of its voids. It is what tax laws that demand
//     an unbroken series ask of the numbering (Germany's GoBD, Spain's
//     VeriFactu, Portugal's SAF-T).
//   - "in-gst": India's GST invoice rule (CGST Rules 2017, rule 46(b)):
//     a serial number of at most 16 characters, of letters, digits, "-"
//     and "/" only, unique for a financial year. New checks the length
//     and the characters of every number the template can print;
//     uniqueness is sn's own guarantee (no string is printed for two
//     counters or numbers).
//   - "fr-continuous": France's rule for invoices (Code général des
//     impôts, annexe II, article 242 nonies A: "une numérotation continue
//     et chronologique"): "gapless", and chronological, a number's date
//     never before an earlier number's. So its numbers take the clock's
//     instant: a call that gives its own (Request.At) is refused.
var Profiles = []string{"gapless", "in-gst", "fr-continuous"}

// WithProfile makes New check the template against the legal profile
// name (see [Profiles]) and refuse one that cannot meet it with an error
// wrapping [ErrProfile] that says which rule, and why. Profiles may be
// combined.
func WithProfile(name string) Option {
	return func(o *options) {
		for _, p := range Profiles {
			if p == name {
				o.profiles = append(o.profiles, name)
				return
			}
		}
		o.errs = append(o.errs, fmt.Errorf("%w: WithProfile(%q): want one of %s", ErrProfile, name, strings.Join(Profiles, ", ")))
	}
}

// checkProfiles checks g against the profiles it declares.
func (g *Generator) checkProfiles(profiles []string) error {
	for _, name := range profiles {
		switch name {
		case "gapless", "fr-continuous":
			if err := g.checkGapless(name); err != nil {
				return err
			}
			if name == "fr-continuous" {
				g.clockOnly = true
			}
		case "in-gst":
			if n := g.plan.MaxLen(); n > 16 || n < 0 {
				return fmt.Errorf("%w in-gst (CGST rule 46(b)): %s prints numbers of up to %d characters, and the rule allows 16: narrow its parts (width=, maxlen=) or drop overflow=grow",
					ErrProfile, g.plan.String(), n)
			}
			if p, r, ok := g.plan.Outside("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-/"); ok {
				return fmt.Errorf("%w in-gst (CGST rule 46(b)): %s at offset %d can print %q, and the rule allows letters, digits, \"-\" and \"/\" only",
					ErrProfile, partLabel(p), p.Offset, r)
			}
		}
	}
	return nil
}

// checkGapless checks that every sequence of g issues without gaps and
// keeps a journal.
func (g *Generator) checkGapless(profile string) error {
	seen := false
	for p := range g.seqParts() {
		seen = true
		c, ok := p.Gen().(sequence.Continuous)
		if !ok || !c.Continuous() {
			return fmt.Errorf("%w %s: %s at offset %d draws from %T, which can leave gaps (blocks, a cache): draw from a gapless sequence (sqlseq's Store.Gapless), in the document's transaction or as a hold then committed",
				ErrProfile, profile, partLabel(p), p.Offset, p.Gen())
		}
		if journal.Of(p.Gen()) == nil {
			return fmt.Errorf("%w %s: %s at offset %d draws from %T, which keeps no journal of its voids", ErrProfile, profile, partLabel(p), p.Offset, p.Gen())
		}
	}
	if !seen {
		return fmt.Errorf("%w %s: %s has no sequence: a series needs one", ErrProfile, profile, g.plan.String())
	}
	return nil
}

func partLabel(p *engine.Part) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("the text %q", p.Lit)
}

// clockOnlyError is the error of a call that gives its own instant to a
// Generator whose profile demands the clock's.
func clockOnlyError() error {
	return fmt.Errorf("%w fr-continuous: a number's date is the instant it is issued, so that the series is chronological: the request gives its own (At); leave it zero: %w", ErrProfile, ErrInstant)
}
