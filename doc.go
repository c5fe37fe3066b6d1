// Package sn issues business numbers — order, waybill, invoice and ticket
// numbers — from templates:
//
//	@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>          SN-00001024-9
//	@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>   2017030400001
//	@<area>-@<unit>-@<seq, width=5, key=unit>                              010-6541-00001
//	RR@<seq, width=8>@<checksum, algo=s10>CN                               RR000000014CN
//
// Every number is unique for its counter key. Gaps are allowed (a number
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
// at start-up with the byte offset of the mistake, never a failure on the
// first order of the day. It also refuses templates that could print the
// same number twice: a counter that resets daily without a printed date, a
// counter per unit that does not print the unit, a template with no
// sequence at all.
//
// Per-call values go in [Vars] ([Generator.NextWith]). A document's own date
// (a posting date) can replace the clock ([Generator.NextAt]), so that a
// back-dated invoice gets the number series of its day. [Generator.NextN]
// issues a batch.
//
// # Where numbers come from
//
// A sequence part ("@<seq>") draws from a [sequence.Gen] registered under its
// name. The default registry's "seq" is an in-memory counter, fine for tests
// and examples and lost at exit; real programs pass a durable one:
// sequence.NewSegment over the embedded store in package boltseq, or over
// Redis in package redisseq. A segment reserves a block of numbers in the
// store and issues them from memory, so nearly every number costs an atomic
// add and only one call per block touches the store.
//
// # The counter key
//
// A sequence is asked for the next number of a key. The key is the value of
// ownerKey when the template prints one, otherwise the canonical template
// text ([Generator.String]), so two different templates never share a
// counter by accident and the same template in two processes always does.
// key=VAR adds a variable (a counter per unit), and reset=day|month|year
// adds the period ("2017-03-04"), taken from the same single reading of the
// clock as the printed date. [Generator.Explain] prints the key.
//
// # Reading numbers back
//
// [Generator.Validate] checks a number against the template — structure,
// widths, real dates, check characters — and says which part is wrong.
// [Generator.Regexp] gives an anchored regular expression with a named group
// per part, for OpenAPI patterns and database CHECK constraints.
//
// # Extending
//
// Register your own parts with [RegisterExpression] or [WithExpression]:
// an [expression.Factory] receives the template's arguments once, at New,
// and returns an [expression.Expression]. A panic in user code becomes an
// error naming the part and its position.
package sn
