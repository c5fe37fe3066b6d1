// Package sn issues business numbers — order, waybill, invoice and ticket
// numbers — from templates:
//
//	@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>          SN-00000001-8
//	@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>   2017030400001
//	@<area>-@<unit>-@<seq, width=5, key=unit>                              010-6541-00001
//	RR@<seq, width=8>@<checksum, algo=s10>CN                               RR000000014CN
//
// Every number is unique: no string is ever printed for two different
// counters, nor for two numbers of one counter. Gaps are allowed (a number
// that was drawn and then not used is simply skipped); repeats never are.
//
// # Issuing numbers
//
// Compile a template once with [New], then call [Generator.Next] from as
// many goroutines as you like:
//
//	orders, err := sn.New(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
//		sn.WithSequence("seq", seg))
//	...
//	n, err := orders.Next(ctx) // "SN-00000001-8"
//
// New resolves every name and checks every argument, so a typo is an error
// at start-up with the byte offset of the mistake ("did you mean date?"),
// never a failure on the first order of the day.
//
// Everything beyond the next number goes in a [Request] to
// [Generator.Issue]: per-call values in Vars, a document's own date (a
// posting date) in At instead of the clock, so that a back-dated invoice
// gets the number series of its day, and a batch of up to [MaxN] in N.
// The request is checked before any number is drawn. [Generator.Append]
// issues into a reused [Batch] without allocating, and
// [Generator.AppendJSON] prints the numbers straight into JSON, as sn
// serve answers. A [Middleware] wraps
// every issuing call: [Retry], [Fallback], [Log] and the metrics
// package's are ready-made.
//
// # Never one string for two numbers
//
// New proves that every string the template can print tells which counter
// and which number printed it. Each part describes the strings it prints:
// literal text; digits of a fixed or minimum width; dates with their real
// ranges (months 01-12, years 0000-9999); a variable's characters (chars=,
// by default anything but the literal text right after it, or, when the
// proof needs it, the template's literal characters) and length
// (maxlen=); check characters of their algorithm's alphabet; a custom
// expression's Pattern (without one, any text). The template prints their
// concatenation, and New looks for a string that splits into parts in two
// ways that differ where a counter key or a number is read. That is decided
// exactly, by running two copies of the template's automaton side by side
// over one input. A template with such a string is refused with an
// *[AmbiguityError] ([ErrAmbiguous]) and a witness — two inputs and the one
// string they both print:
//
//	sn.New(`@<area>@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
//	// sn: template: offset 0: ambiguous: "011" is printed by {area="01", seq=1 ...}
//	//     and by {area="0", seq=11 ...}; where @<area> ends and @<seq> begins cannot be told ...
//
// Fixed-width neighbours are not fences by themselves; a literal character
// that the part before it cannot print is. The same proof runs across
// templates ([CheckSet]): two templates sharing a store must not print one
// string from two counters, and templates on different stores must not
// print one string at all. A two-digit year (yy) that decides a reset
// period needs window= (yy then means 2000-2099, say), and instants outside
// the window are refused.
//
// [Generator.Parse] reads a number back: the counter key and the number
// drawn, and the variables; it is the inverse of Next. [Generator.Validate]
// says which part of a string is wrong, and [Generator.Regexp] gives an
// anchored regular expression with a named group per part.
//
// # Where numbers come from
//
// A sequence part ("@<seq>") draws from a [sequence.Gen] given under its
// name, with [WithSequence]; nothing is given by
// default, and a template whose sequence nobody gave is refused at New
// ("no sequence "seq": forgotten sn.WithSequence?"). Tests pass
// sequence.NewMemory(); real programs pass a durable one: a
// sequence.Segment over the embedded store in package boltseq, over the
// shared ledger in package sqlseq, or over Redis in front of it in package
// redisseq. A segment reserves a block of numbers in the store and issues
// them from memory, so nearly every number costs an atomic add and only one
// call per block touches the store.
//
// # What a store remembers
//
// A number is unique within its store: two machines that each keep their
// own store print the same numbers. Every machine that issues a series
// must share one store, or one ledger.
//
// Every durable store keeps a catalog of the templates drawn from it
// ([catalog.Catalog]). Before its first number a template is enrolled:
// proven against every template the store has served, in any run, process
// or machine, under the rule of [CheckSet] for templates sharing a store.
// So the headline template above and "SN-@<seq, width=8>-@<checksum,
// algo=luhn>", which print the same numbers from two counters, cannot both
// draw from one store, nor can a template edited in place into one that
// prints an old number again; the same template in another spelling, or
// widened, continues its counter. [Generator.Enroll] enrolls at start-up,
// so that the refusal comes then; [ReadCatalog] lists a catalog.
//
// # The template language
//
//	template := ( text | "@@" | dynamic )*
//	dynamic  := "@<" name ( "," arg )* ">"
//	arg      := key "=" value | key          a bare key means key=true
//	value    := bare-word | "double-quoted, with \" and \\ escapes"
//	name,key := [A-Za-z_][A-Za-z0-9_.-]*
//
// Whitespace inside "@< >" is ignored. "@@" prints "@"; an "@" followed by
// neither "<" nor "@" is literal. A bare value is any run of characters
// other than white space and , > " = <; quote anything else. A name
// resolves, in this order, to a sequence given with [WithSequence], an
// expression of the registry, or else a variable. The parts:
//
//   - @<NAME, value=V> prints V and sets the variable NAME for the call;
//     ownerKey names the counter.
//   - @<NAME> prints the per-call variable NAME, verbatim, once per
//     template; maxlen=1..256 bounds its characters, chars=CLASS which
//     (such as 0-9A-Z, or ^- for all but "-"; by default anything printable
//     but the literal text right after it, so INV-@<company>- takes INITECH;
//     where the proof needs every literal character kept out and that keeps
//     out a letter or a digit, New refuses the template with the chars= to
//     write, rather than a value at its first number), and var makes a name
//     that is also an expression's a variable.
//   - @<seq> (any sequence given) prints the next number: width=1..19
//     zero-pads it, overflow=error (the default: a number with more digits
//     is an error wrapping [ErrOverflow], and skipped) or grow; key=VAR
//     keeps a counter per value of VAR; reset=year, fiscal-year, quarter,
//     month, week, day, hour, minute or second starts it again each
//     period; obfuscate=NAME prints a keyed permutation of it (with
//     width=; see [WithObfuscation]); radix=2..62 or alphabet=DIGITS
//     prints it in other digits.
//   - @<date> prints the call's instant: format= of yyyy yy (year), Q
//     (quarter), MM, dd, DDD (day of the year), YYYY YY with ww (ISO
//     week-based year and week), ffff ff / FFFF FF (fiscal year by the year
//     it ends / starts in), HH mm ss, literal non-letters and 'quoted text'
//     (default yyyyMMdd); tz=Area/City (default UTC); window=YYYY (a
//     two-digit year means YYYY to YYYY+99); fiscal=1..12 or a month's name
//     (the month a fiscal year starts in). Years are 0000-9999.
//   - @<checksum, algo=NAME> prints check characters over the nearest
//     sequence before it, or the first after it when none is before
//     (over=seq, the default), or over all the text before it (over=all);
//     package checksum lists the algorithms. An algorithm that cannot take
//     every character it would be computed over is refused at New; for a
//     variable without chars= the value is checked per call, before any
//     number is drawn.
//   - @<random, width=1..64> prints crypto-random filler of alphabet= (0-9
//     by default, ranges allowed), never the source of uniqueness.
//
// The sequences of a number are drawn first, after the instant and the
// variables are checked. Then each part has an Order — Before (dates),
// Normal (sequences, variables, most custom parts), After (check
// characters) — and parts are evaluated by Order, then position; literal
// text takes the Order of the part before it. Output always follows
// position.
//
// # The counter key
//
// A sequence is asked for the next number of a key. The key is made of, in
// order, joined by "|":
//
//   - the value of ownerKey when the template prints it (set in the
//     template, "@<ownerKey, value=SN>", or given per call); otherwise what
//     the template means: its literal text and the identity of its parts,
//     with what is only formatting left out — a sequence's width and
//     overflow, a variable's maxlen and chars, a date's format and time
//     zone, check characters and random filler — and with arguments in a
//     fixed order and values canonically spelt;
//   - with key=VAR, "VAR=" and the variable's value (a counter per unit);
//   - with reset= (year, fiscal-year, quarter, month, week, day, hour,
//     minute, second), the period as the template's date reads it
//     ("2017", "FY2017-04", "2017-Q1", "2017-03", "2017-W09", "2017-03-04",
//     "2017-03-04T10"...), taken from the same single reading of the clock
//     as the printed date.
//
// Each component has "\" and "|" escaped, so that no two inputs give one
// key. So argument order, spelled-out defaults, "06" for 6, whitespace and
// quoting never change the key, and widening QJ@<seq, width=6> to width=8
// continues its numbering; a different prefix, ownerKey, key= or reset= is
// a different series. [Generator.Explain] prints the key.
//
// # Extending
//
// Register your own parts with [RegisterExpression], or in a [Registry] of
// your own given with [WithRegistry]:
// an [expression.Factory] receives the template's arguments once, at New,
// and returns an [expression.Expression]. Give it a Pattern
// ([expression.Patterner]) so that New can prove the template; its output
// is checked against it. A panic in user code becomes an error naming the
// part and its position.
package sn
