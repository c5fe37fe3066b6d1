package sn_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sngen/sn"
	"github.com/sngen/sn/expression"
	"github.com/sngen/sn/parser"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/journal"
)

func Example() {
	g, err := sn.New(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
		sn.WithSequence("seq", sequence.NewMemory()))
	if err != nil {
		panic(err)
	}
	for i := 0; i < 3; i++ {
		n, err := g.Next(context.Background())
		if err != nil {
			panic(err)
		}
		fmt.Println(n)
	}
	fmt.Println(g.Validate("SN-00000002-6"))
	// Output:
	// SN-00000001-8
	// SN-00000002-6
	// SN-00000003-4
	// <nil>
}

func ExampleNew() {
	_, err := sn.New(`SN-@<seq, widht=8>`, sn.WithSequence("seq", sequence.NewMemory()))
	fmt.Println(err)
	var pe *parser.Error
	if errors.As(err, &pe) {
		fmt.Println("offset:", pe.Offset)
	}
	// Output:
	// sn: template: offset 10: seq: unknown argument "widht": did you mean width?
	// 	SN-@<seq, widht=8>
	// 	          ^
	// offset: 10
}

func ExampleMustNew() {
	var orders = sn.MustNew(`QJ@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	n, _ := orders.Next(context.Background())
	fmt.Println(n)
	// Output: QJ000001
}

// Per-call variables: a counter per unit.
func ExampleGenerator_Issue_vars() {
	g := sn.MustNew(`@<area>-@<unit>-@<seq, width=5, key=unit>`, sn.WithSequence("seq", sequence.NewMemory()))
	ctx := context.Background()
	for _, unit := range []string{"6541", "6542", "6541"} {
		nums, _ := g.Issue(ctx, sn.Request{Vars: sn.Vars{"area": "010", "unit": unit}})
		fmt.Println(nums[0])
	}
	// Output:
	// 010-6541-00001
	// 010-6542-00001
	// 010-6541-00002
}

// A document's own date: the number's date and daily counter follow it.
func ExampleGenerator_Issue_at() {
	g := sn.MustNew(`@<date, format=yyyyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		sn.WithSequence("seq", sequence.NewMemory()))
	ctx := context.Background()
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	posted := time.Date(2017, 3, 4, 15, 0, 0, 0, shanghai) // the document's own date
	a, _ := g.Issue(ctx, sn.Request{At: posted})
	b, _ := g.Issue(ctx, sn.Request{At: posted.Add(12 * time.Hour)})
	fmt.Println(a[0])
	fmt.Println(b[0])
	// Output:
	// 2017030400001
	// 2017030500001
}

// A batch of numbers in one call.
func ExampleGenerator_Issue() {
	g := sn.MustNew(`T@<seq, width=3>`, sn.WithSequence("seq", sequence.NewMemory()))
	batch, _ := g.Issue(context.Background(), sn.Request{N: 3})
	fmt.Println(batch)
	// Output: [T001 T002 T003]
}

func ExampleGenerator_Append() {
	g := sn.MustNew(`T@<seq, width=3>`, sn.WithSequence("seq", sequence.NewMemory()))
	var b sn.Batch // kept and reused: no allocation once it has grown
	for range 2 {
		b.Reset()
		g.Append(context.Background(), &b, sn.Request{N: 3})
		for i := range b.Len() {
			fmt.Printf("%s ", b.Bytes(i))
		}
	}
	// Output: T001 T002 T003 T004 T005 T006
}

func ExampleGenerator_AppendJSON() {
	g := sn.MustNew(`SN-@<seq, width=4>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
	buf := []byte(`{"numbers":[`)
	buf, n, err := g.AppendJSON(context.Background(), buf, sn.Request{N: 3})
	buf = append(buf, "]}"...)
	fmt.Println(string(buf), n, err)
	// Output: {"numbers":["SN-0001-8","SN-0002-6","SN-0003-4"]} 3 <nil>
}

func ExampleGenerator_Validate() {
	g := sn.MustNew(`RR@<seq, width=8>@<checksum, algo=s10>CN`, sn.WithSequence("seq", sequence.NewMemory()))
	fmt.Println(g.Validate("RR473124829CN"))
	err := g.Validate("RR473124828CN")
	fmt.Println(err)
	var ve *sn.ValidationError
	if errors.As(err, &ve) {
		fmt.Println("wrong part:", ve.Part)
	}
	// Output:
	// <nil>
	// sn: invalid number "RR473124828CN": checksum at offset 17: check "8" is wrong for "47312482" (s10)
	// wrong part: checksum
}

func ExampleGenerator_Regexp() {
	g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
	fmt.Println(g.Regexp())
	// Output: ^(?<ownerKey>SN)-(?<seq>[0-9]{8})-(?<checksum>[0-9])$
}

func ExampleGenerator_MaxLen() {
	fmt.Println(sn.MustNew(`QJ@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory())).MaxLen())
	fmt.Println(sn.MustNew(`@<customer>-@<seq>`, sn.WithSequence("seq", sequence.NewMemory())).MaxLen())
	// Output:
	// 8
	// -1
}

func ExampleGenerator_String() {
	g := sn.MustNew(`@<ownerKey,value=SN>-@<  seq , width = 8 >`, sn.WithSequence("seq", sequence.NewMemory()))
	fmt.Println(g)
	// Output: @<ownerKey, value=SN>-@<seq, width=8>
}

func ExampleGenerator_Explain() {
	g := sn.MustNew(`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`, sn.WithSequence("seq", sequence.NewMemory()))
	fmt.Print(g.Explain())
	// Output:
	// template:   @<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>
	// parts (in template order; eval is the evaluation step):
	//   #  offset  kind        order   eval  maxlen  part
	//   1  0       setter      Before  1     2       @<ownerKey, value=SN>
	//   2  21      text        Before  2     1       "-"
	//   3  22      sequence    Normal  3     8       @<seq, width=8>
	//   4  37      text        Normal  4     1       "-"
	//   5  38      expression  After   5     1       @<checksum, algo=luhn>
	// counter key of seq at offset 22: SN
	// numbers of seq at offset 22: 1 to 99999999, then overflow (sn series shows how much is used)
	// max length: 13
	// regexp:     ^(?<ownerKey>SN)-(?<seq>[0-9]{8})-(?<checksum>[0-9])$
}

func ExampleGenerator_Preview() {
	mem := sequence.NewMemory()
	g := sn.MustNew(`INV-@<date, format=yyyy>-@<seq, width=4, reset=year>`, sn.WithSequence("seq", mem))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	samples, _ := g.Preview(context.Background(), sn.Request{N: 2, At: at})
	fmt.Println(samples)
	nums, _ := g.Issue(context.Background(), sn.Request{At: at})
	n := nums[0]
	fmt.Println(n) // the preview consumed nothing
	// Output:
	// [INV-2025-0001 INV-2025-0002]
	// INV-2025-0001
}

func ExampleWithClock() {
	clock := func() time.Time { return time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC) }
	g := sn.MustNew(`@<date, format=yyMMdd, window=2000>@<seq, width=3, reset=day>`,
		sn.WithSequence("seq", sequence.NewMemory()), sn.WithClock(clock))
	n, _ := g.Next(context.Background())
	fmt.Println(n)
	// Output: 240229001
}

// An expression that prints a region code given in code, not per call.
type region string

func (r region) Append(dst []byte, _ *expression.Context) ([]byte, error) {
	return append(dst, r...), nil
}
func (region) Order() expression.Order { return expression.Before }
func (r region) MaxLen() int           { return len(r) }

// Pattern says exactly what the part prints, so that New can prove the
// templates that use it.
func (r region) Pattern() string { return regexp.QuoteMeta(string(r)) }

// A registry of one's own: the built-ins and a custom expression, for the
// Generators given it.
func ExampleRegistry() {
	r := sn.NewRegistry()
	r.RegisterExpression("region", func(args expression.Args) (expression.Expression, error) {
		if err := args.Check("code"); err != nil {
			return nil, err
		}
		return region(args["code"]), nil
	})
	g := sn.MustNew(`@<region, code=EU>-@<seq, width=4>`, sn.WithRegistry(r), sn.WithSequence("seq", sequence.NewMemory()))
	n, _ := g.Next(context.Background())
	fmt.Println(n)
	fmt.Println(r.Expressions())
	// Output:
	// EU-0001
	// [checksum date random region]
}

func ExampleWithSequence() {
	// Any sequence.Gen: here one that starts above the numbers an older
	// system already issued.
	legacy := &sequence.Memory{Start: 500001}
	g := sn.MustNew(`PO@<seq, width=7>`, sn.WithSequence("seq", legacy))
	n, _ := g.Next(context.Background())
	fmt.Println(n)
	// Output: PO0500001
}

func ExampleRegisterExpression() {
	sn.RegisterExpression("site", func(args expression.Args) (expression.Expression, error) {
		return region("HQ"), args.Check()
	})
	g := sn.MustNew(`@<site>@<seq, width=3>`, sn.WithSequence("seq", sequence.NewMemory()))
	n, _ := g.Next(context.Background())
	fmt.Println(n)
	// Output: HQ001
}

func ExampleDefaultRegistry() {
	// Other code may have registered more; the built-ins are always there.
	r := sn.DefaultRegistry()
	fmt.Println(slices.Contains(r.Expressions(), "date"))
	// Output: true
}

func ExampleGenerator_Floor() {
	// The old system issued orders up to PO0499999: continue above it.
	g := sn.MustNew(`@<ownerKey, value=PO>@<seq, width=7>`, sn.WithSequence("seq", sequence.NewMemory()))
	if err := g.Floor(context.Background(), 499999); err != nil {
		panic(err)
	}
	n, _ := g.Next(context.Background())
	fmt.Println(n)
	// Output: PO0500000
}

// Parse reads a number back: the counter it was drawn from, the number,
// and the variables.
func ExampleGenerator_Parse() {
	g := sn.MustNew(`@<area, maxlen=3>-@<unit, chars=0-9>-@<seq, width=5, key=unit>`, sn.WithSequence("seq", sequence.NewMemory()))
	p, err := g.Parse("010-6541-00012")
	fmt.Println(p.Key, p.Seq, p.Vars["unit"], err)
	// Output: @<area>-@<unit>-@<seq, key=unit>|unit=6541 12 6541 <nil>
}

// New refuses a template that can print one string for two counters or two
// numbers, with a witness.
func ExampleNew_ambiguous() {
	_, err := sn.New(`@<area>@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	var ae *sn.AmbiguityError
	if errors.As(err, &ae) {
		w := ae.Witness
		fmt.Printf("%q is printed by area=%q with %d and by area=%q with %d\n",
			w.Number, w.A.Vars["area"], w.A.Draws[0].Seq, w.B.Vars["area"], w.B.Draws[0].Seq)
	}
	fmt.Println(errors.Is(err, sn.ErrAmbiguous), errors.Is(err, sn.ErrTemplate))
	// Output:
	// "011" is printed by area="01" with 1 and by area="0" with 11
	// true true
}

// CheckSet refuses templates that can print one number from two counters.
func ExampleCheckSet() {
	a := sn.MustNew(`1@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	b := sn.MustNew(`@<seq>`, sn.WithSequence("seq", sequence.NewMemory()))
	err := sn.CheckSet([]sn.Member{{Name: "a", Gen: a, Store: "db"}, {Name: "b", Gen: b, Store: "db"}})
	var ae *sn.AmbiguityError
	if errors.As(err, &ae) {
		fmt.Printf("%q: %s %d and %s %d\n", ae.Witness.Number,
			ae.Witness.A.Template, ae.Witness.A.Draws[0].Seq, ae.Witness.B.Template, ae.Witness.B.Draws[0].Seq)
	}
	// Output: "11": a 1 and b 11
}

// FloorParsed continues series whose counter key varies per call, from the
// numbers an older system printed.
func ExampleGenerator_FloorParsed() {
	g := sn.MustNew(`@<unit, chars=0-9>-@<seq, width=4, key=unit>`, sn.WithSequence("seq", sequence.NewMemory()))
	var old []sn.Parsed
	for _, s := range []string{"7-0041", "7-0007", "8-0100"} {
		p, _ := g.Parse(s)
		old = append(old, p)
	}
	if err := g.FloorParsed(context.Background(), old...); err != nil {
		fmt.Println(err)
	}
	for _, unit := range []string{"7", "8", "9"} {
		nums, _ := g.Issue(context.Background(), sn.Request{Vars: sn.Vars{"unit": unit}})
		n := nums[0]
		fmt.Println(n)
	}
	// Output:
	// 7-0042
	// 8-0101
	// 9-0001
}

// Middleware around issuing: a fall back to a second series while the
// first store is down, and an audit line of what each call issued.
func ExampleWithMiddleware() {
	ctx := context.Background()
	backup := sn.MustNew(`B-@<seq, width=6>`, sn.WithSequence("seq", sequence.NewMemory()))
	store := &switchable{m: sequence.NewMemory()}
	audit := func(g *sn.Generator, next sn.IssueFunc) (sn.IssueFunc, error) {
		return func(ctx context.Context, b *sn.Batch, r sn.Request) error {
			from := b.Len()
			err := next(ctx, b, r)
			for i := from; i < b.Len(); i++ {
				fmt.Printf("%s issued %s\n", g.Name(), b.Bytes(i))
			}
			return err
		}, nil
	}
	g, err := sn.New(`A-@<seq, width=6>`, sn.WithSequence("seq", store), sn.WithName("orders"),
		sn.WithMiddleware(audit, sn.Fallback(backup), sn.Retry(10*time.Millisecond)))
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Next(ctx)
	store.down = true
	g.Next(ctx)
	// Output:
	// orders issued A-000001
	// orders issued B-000001
}

// switchable is a store that can be switched off.
type switchable struct {
	m    *sequence.Memory
	down bool
}

func (s *switchable) Next(ctx context.Context, key string) (int64, error) {
	if s.down {
		return 0, sequence.ErrUnavailable
	}
	return s.m.Next(ctx, key)
}

// A number voided stays used: its counter's journal says why, and an
// audit of the journal lists it with the reason.
func ExampleGenerator_Void() {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	seg, _ := sequence.NewSegment(store, sequence.SegmentOptions{})
	defer seg.Close()
	g := sn.MustNew("INV-@<seq, width=6>", sn.WithSequence("seq", seg))
	g.Issue(ctx, sn.Request{N: 3})

	err := g.Void(sn.WithActor(ctx, "alice"), "INV-000002", "issued in error")
	fmt.Println(err)

	key, _ := g.Key(sn.Request{})
	events, head, _ := journal.ReadJournal(ctx, journal.Of(store), key)
	report := journal.Audit(key, events, head, time.Now())
	for _, s := range report.Within(1, 3) {
		fmt.Println(s.Range, s.State)
	}
	// Output:
	// <nil>
	// [1, 1] open
	// [2, 2] void
	// [3, 3] open
}

// A printed batch of forms was destroyed: its numbers are void, two
// journal records for the two runs.
func ExampleGenerator_VoidNumbers() {
	ctx := context.Background()
	store := sequence.NewMemoryAllocator()
	seg, _ := sequence.NewSegment(store, sequence.SegmentOptions{})
	defer seg.Close()
	g := sn.MustNew("F-@<seq, width=4>", sn.WithSequence("seq", seg))
	g.Issue(ctx, sn.Request{N: 8})

	fmt.Println(g.VoidNumbers(ctx, []string{"F-0001", "X-1"}, "one bad number voids none"))
	err := g.VoidNumbers(ctx, []string{"F-0006", "F-0002", "F-0003", "F-0005", "F-0004", "F-0008"}, "forms destroyed in the print room")
	fmt.Println(err)

	key, _ := g.Key(sn.Request{})
	events, head, _ := journal.ReadJournal(ctx, journal.Of(store), key)
	for _, s := range journal.Audit(key, events, head, time.Now()).Within(1, 8) {
		fmt.Println(s.Range, s.State)
	}
	// Output:
	// sn: invalid number "X-1": text at offset 0: want "F-" at byte 0, found "X-1"
	// <nil>
	// [1, 1] open
	// [2, 6] void
	// [7, 7] open
	// [8, 8] void
}

// A legal profile is checked when the template compiles: India's GST
// rule allows 16 characters of letters, digits, "-" and "/".
func ExampleWithProfile() {
	_, err := sn.New("INV_@<seq, width=8>", sn.WithSequence("seq", sequence.NewMemory()), sn.WithProfile("in-gst"))
	fmt.Println(err)
	// Output:
	// sn: template does not meet its profile in-gst (CGST rule 46(b)): the text "INV_" at offset 0 can print '_', and the rule allows letters, digits, "-" and "/" only
}

// A retry with the same idempotency key gets the numbers the first call
// was given, not new ones.
func ExampleRequest_idempotencyKey() {
	ctx := context.Background()
	seg, _ := sequence.NewSegment(sequence.NewMemoryAllocator(), sequence.SegmentOptions{})
	defer seg.Close()
	g := sn.MustNew("SO-@<seq, width=5>", sn.WithSequence("seq", seg))
	first, _ := g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-7f3a"})
	retry, _ := g.Issue(ctx, sn.Request{N: 2, IdempotencyKey: "order-7f3a"})
	next, _ := g.Next(ctx)
	fmt.Println(first, retry, next)
	// Output:
	// [SO-00001 SO-00002] [SO-00001 SO-00002] SO-00003
}

// A service that hands out blocks of a template's counters checks each
// key a client asks for: one the template makes, or an error naming the
// component that is not.
func ExampleGenerator_CheckKey() {
	g, err := sn.New(`D@<date, format=yyyyMMdd>-@<seq, width=5, reset=day>`, sn.WithSequence("seq", sequence.NewMemory()))
	if err != nil {
		panic(err)
	}
	key, _ := g.Key(sn.Request{At: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)})
	fmt.Println(key)
	fmt.Println(g.CheckKey(key))
	fmt.Println(g.CheckKey(strings.Replace(key, "2026-11-26", "2026-02-30", 1)))
	// Output:
	// D@<date>-@<seq, reset=day>|2026-11-26
	// <nil>
	// sn: sequence: invalid argument: counter key "D@<date>-@<seq, reset=day>|2026-02-30": "2026-02-30" is not a period of reset=day (want <yyyy-MM-dd>)
}

// A service that receives numbers another issues checks them with no
// sequence of its own.
func ExampleCheckOnly() {
	g := sn.MustNew(`SN-@<seq, width=8>-@<checksum, algo=luhn>`, sn.CheckOnly())
	fmt.Println(g.Validate("SN-00000001-8"))
	fmt.Println(g.Validate("SN-00000001-3") != nil)
	_, err := g.Next(context.Background())
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// <nil>
	// true
	// true
}
