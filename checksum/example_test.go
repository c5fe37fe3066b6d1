package checksum_test

import (
	"errors"
	"fmt"

	"github.com/sngen/sn/checksum"
)

func ExampleLookup() {
	luhn, err := checksum.Lookup("luhn")
	if err != nil {
		panic(err)
	}
	check, _ := luhn.Compute("7992739871")
	fmt.Println(check)

	_, err = checksum.Lookup("lunh")
	fmt.Println(err)
	fmt.Println(errors.Is(err, checksum.ErrUnknown))
	// Output:
	// 3
	// checksum: unknown algorithm "lunh" (known: damm, gs1, jd, luhn, mod11-10, mod11-2, mod37-2, mod97-10, s10, verhoeff)
	// true
}

func ExampleNames() {
	for _, name := range checksum.Names() {
		a, _ := checksum.Lookup(name)
		fmt.Printf("%-8s %d %s\n", name, a.Len(), a.Pattern())
	}
	// Output:
	// damm     1 [0-9]
	// gs1      1 [0-9]
	// jd       1 [0-9]
	// luhn     1 [0-9]
	// mod11-10 1 [0-9]
	// mod11-2  1 [0-9X]
	// mod37-2  1 [0-9A-Z*]
	// mod97-10 2 (?:0[2-9]|[1-8][0-9]|9[0-8])
	// s10      1 [0-9]
	// verhoeff 1 [0-9]
}

func ExampleAlgorithm_Compute() {
	s10, _ := checksum.Lookup("s10")
	check, err := s10.Compute("00000001")
	fmt.Println("RR"+"00000001"+check+"CN", err)

	orcid, _ := checksum.Lookup("mod11-2")
	check, _ = orcid.Compute("000000021694233")
	fmt.Println("0000-0002-1694-233" + check)

	luhn, _ := checksum.Lookup("luhn")
	_, err = luhn.Compute("123A5")
	fmt.Println(err)
	var ae *checksum.AlphabetError
	fmt.Println(errors.As(err, &ae), ae.Index, errors.Is(err, checksum.ErrAlphabet))

	_, err = s10.Compute("1234567")
	fmt.Println(err, errors.Is(err, checksum.ErrLength))
	// Output:
	// RR000000014CN <nil>
	// 0000-0002-1694-233X
	// checksum: luhn: 'A' at index 3 is not a digit
	// true 3 true
	// checksum: s10: payload has 7 characters, want 8 true
}

func ExampleAlgorithm_Validate() {
	iban, _ := checksum.Lookup("mod97-10")
	// GB82WEST12345698765432 with the country code and check digits moved
	// to the end, as IBAN validation does.
	fmt.Println(iban.Validate("WEST12345698765432GB82"))
	fmt.Println(iban.Validate("WEST12345698765432GB28"))

	damm, _ := checksum.Lookup("damm")
	fmt.Println(damm.Validate("5724"), damm.Validate("5274"), damm.Validate("4"))
	// Output:
	// true
	// false
	// true false false
}

func ExampleAppender() {
	alg, _ := checksum.Lookup("luhn")
	ap := alg.(checksum.Appender) // every built-in algorithm is an Appender

	buf := make([]byte, 0, 32)
	for _, seq := range []string{"00001024", "00001025"} {
		buf = append(buf[:0], "SN-"...)
		buf = append(buf, seq...)
		buf = append(buf, '-')
		var err error
		if buf, err = ap.AppendCheck(buf, []byte(seq)); err != nil {
			panic(err)
		}
		fmt.Println(string(buf))
	}
	// Output:
	// SN-00001024-9
	// SN-00001025-6
}
