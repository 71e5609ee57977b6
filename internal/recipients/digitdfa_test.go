package recipients

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"
	"google.golang.org/protobuf/proto"
)

// TestDigitDFAMatchesRegexp checks the automaton against regexp on every
// digit string up to five digits and on random longer ones.
func TestDigitDFAMatchesRegexp(t *testing.T) {
	patterns := []string{
		`1[5-7]\d{3}`,
		`(?:30|4[0-5])\d{1,3}`,
		`\d{4,6}`,
		`9(?:1|2\d)?`,
		`(?:2(?:0[1-9]|1)|3)\d{2}|5`,
		`8{2,}0*`,
	}
	d, err := newDigitDFA(patterns)
	if err != nil {
		t.Fatal(err)
	}
	res := make([]*regexp.Regexp, len(patterns))
	for k, p := range patterns {
		res[k] = regexp.MustCompile("^(?:" + p + ")$")
	}
	check := func(s string) {
		t.Helper()
		var want uint32
		for k, re := range res {
			if re.MatchString(s) {
				want |= 1 << k
			}
		}
		if got := d.matchAll(s); got != want {
			t.Errorf("matchAll(%q) = %b, regexp says %b", s, got, want)
		}
	}
	check("")
	for n, end := 1, 10; n <= 5; n, end = n+1, end*10 {
		for i := range end {
			check(strings.Repeat("0", n-len(strconv.Itoa(i))) + strconv.Itoa(i))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, 6+rng.IntN(8))
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		check(string(b))
	}
	for _, s := range []string{"15a23", "1523 ", "+1523", "١٥٢٣٤"} {
		if got := d.matchAll(s); got != 0 {
			t.Errorf("matchAll(%q) = %b, want 0 for what is not all digits", s, got)
		}
	}
}

func TestDigitDFAMatchesNothing(t *testing.T) {
	d, err := newDigitDFA([]string{`[^\x00-\x{10FFFF}]`})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "1", "123456"} {
		if got := d.matchAll(s); got != 0 {
			t.Errorf("matchAll(%q) = %b, want 0", s, got)
		}
	}
}

func TestDigitDFARefuses(t *testing.T) {
	for _, p := range []string{`\b1\d`, `1(?:^2)`, `(`} {
		if _, err := newDigitDFA([]string{`\d`, p}); err == nil {
			t.Errorf("newDigitDFA accepted %q", p)
		}
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = `\d`
	}
	if _, err := newDigitDFA(many); err == nil {
		t.Error("newDigitDFA accepted 33 patterns")
	}
	// 2^16 subsets: an automaton over the limit is refused, not built.
	if _, err := newDigitDFA([]string{`\d*1\d{15}`}); err == nil {
		t.Error("newDigitDFA built an automaton over maxDFAStates")
	}
}

// FuzzValidNumber checks validNumber against phonenumbers.IsValidNumber on
// any national significant number of a few country codes.
func FuzzValidNumber(f *testing.F) {
	for _, s := range []string{"15123456789", "30123456", "2025550123", "7400123456", "9876543210", "13800138000", "11987654321"} {
		f.Add(uint16(49), s)
	}
	f.Add(uint16(1), "4155552671")
	f.Add(uint16(44), "7400123456")
	f.Add(uint16(7), "9123456789")
	f.Fuzz(func(t *testing.T, cc uint16, nsn string) {
		if cc == 0 || cc > 999 || len(phonenumbers.GetRegionCodesForCountryCode(int(cc))) == 0 {
			return
		}
		if nsn == "" || nsn[0] == '0' || len(nsn) > 17 {
			return // fastE164 and fastNational leave these to phonenumbers.Parse
		}
		n, err := strconv.ParseUint(nsn, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != nsn {
			return
		}
		pn := &phonenumbers.PhoneNumber{CountryCode: proto.Int32(int32(cc)), NationalNumber: proto.Uint64(n)}
		if got, want := validNumber(int(cc), nsn), phonenumbers.IsValidNumber(pn); got != want {
			t.Errorf("validNumber(%d, %s) = %v, phonenumbers says %v", cc, nsn, got, want)
		}
	})
}
