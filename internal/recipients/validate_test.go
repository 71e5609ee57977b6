package recipients

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nyaruka/phonenumbers"
	"google.golang.org/protobuf/proto"
)

// TestValidNumberMatchesPhonenumbers checks validNumber against the library
// it stands in for: every region's example numbers, each with every digit
// changed and one digit more or less, and random numbers for every country
// code.
func TestValidNumberMatchesPhonenumbers(t *testing.T) {
	check := func(cc int, nsn string) {
		t.Helper()
		if nsn == "" || nsn[0] == '0' || len(nsn) > 17 {
			return // fastE164 leaves these to phonenumbers.Parse
		}
		n, err := strconv.ParseUint(nsn, 10, 64)
		if err != nil {
			return
		}
		pn := &phonenumbers.PhoneNumber{CountryCode: proto.Int32(int32(cc)), NationalNumber: proto.Uint64(n)}
		if got, want := validNumber(cc, nsn), phonenumbers.IsValidNumber(pn); got != want {
			t.Errorf("validNumber(%d, %s) = %v, phonenumbers says %v", cc, nsn, got, want)
		}
	}
	types := []phonenumbers.PhoneNumberType{
		phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE, phonenumbers.PREMIUM_RATE,
		phonenumbers.SHARED_COST, phonenumbers.VOIP, phonenumbers.PERSONAL_NUMBER, phonenumbers.PAGER,
		phonenumbers.UAN, phonenumbers.VOICEMAIL,
	}
	checked := 0
	for region := range phonenumbers.GetSupportedRegions() {
		for _, typ := range types {
			ex := phonenumbers.GetExampleNumberForType(region, typ)
			if ex == nil {
				continue
			}
			cc := int(ex.GetCountryCode())
			nsn := phonenumbers.GetNationalSignificantNumber(ex)
			check(cc, nsn)
			check(cc, nsn+"5")
			check(cc, nsn[:len(nsn)-1])
			for i := range len(nsn) {
				for _, d := range "0359" {
					check(cc, nsn[:i]+string(d)+nsn[i+1:])
				}
			}
			checked++
		}
	}
	if checked < 500 {
		t.Fatalf("only %d example numbers; is the metadata there?", checked)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for cc := 1; cc < 1000; cc++ {
		if len(phonenumbers.GetRegionCodesForCountryCode(cc)) == 0 {
			continue
		}
		for range 40 {
			n := 1 + rng.IntN(9)
			for range 4 + rng.IntN(10) {
				n = n*10 + rng.IntN(10)
			}
			check(cc, strconv.Itoa(n))
		}
	}
}

// TestFastNationalMatchesParse checks fastNational against phonenumbers.Parse
// on every region's example numbers written in national format, and on
// the same digits without the national prefix.
func TestFastNationalMatchesParse(t *testing.T) {
	types := []phonenumbers.PhoneNumberType{phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE, phonenumbers.VOIP}
	answered := 0
	for region := range phonenumbers.GetSupportedRegions() {
		for _, typ := range types {
			ex := phonenumbers.GetExampleNumberForType(region, typ)
			if ex == nil {
				continue
			}
			national := phonenumbers.NormalizeDigitsOnly(phonenumbers.Format(ex, phonenumbers.NATIONAL))
			for _, digits := range []string{national, phonenumbers.GetNationalSignificantNumber(ex), national + "1", national[1:]} {
				got, ok := fastNational(digits, region)
				if !ok {
					continue
				}
				answered++
				pn, err := phonenumbers.Parse(digits, region)
				if err != nil || !phonenumbers.IsValidNumber(pn) {
					t.Errorf("fastNational(%s, %s) = %s, but Parse says invalid (%v)", digits, region, got, err)
					continue
				}
				if want := phonenumbers.Format(pn, phonenumbers.E164); got != want {
					t.Errorf("fastNational(%s, %s) = %s, Parse gives %s", digits, region, got, want)
				}
			}
		}
	}
	if answered < 300 {
		t.Errorf("fastNational answered only %d times; the fast path is not being taken", answered)
	}
}
