package recipients

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Reasons a phone number is rejected. NormalizePhone wraps them, so callers
// can use errors.Is and the message still says which region was meant.
var (
	ErrEmpty         = errors.New("empty")
	ErrNotANumber    = errors.New("not a number")
	ErrTooShort      = errors.New("too short")
	ErrTooLong       = errors.New("too long")
	ErrCountryCode   = errors.New("invalid country code")
	ErrNoCountryCode = errors.New("a national number without its country; pass --region CC (e.g. --region DE) or write it with +CC")
	ErrInvalidNumber = errors.New("not a valid phone number")
	ErrUnknownRegion = errors.New("unknown region")
	ErrUserID        = errors.New("not a business-scoped user id")
)

// maxDigits is E.164's limit; minDigits is below the shortest real
// subscriber number with its country code, where phonenumbers would only say
// "not valid" for what is plainly a fragment.
const (
	minDigits = 6
	maxDigits = 15
)

// NormalizePhone returns input in E.164 form ("+4915112345678").
//
// Accepted: a leading "+" or "00", and spaces, dashes, dots, slashes and
// brackets between digits. Anything else (letters, extensions) is "not a
// number": phonenumbers would read letters as a vanity keypad, which is never
// what a recipient list means.
//
// A number without "+"/"00" is read as a national number of region; if that
// is not valid, or region is "", it is read as international digits without
// the "+" (the way WhatsApp writes wa_id), so "8613800138000" and
// "+86 138-0013-8000" give the same result. With a region, digits that
// begin with that region's own country code are tried as international
// first. Other countries' numbers need "+"/"00" when region is set: German
// numbering accepts almost any long digit string as national.
func NormalizePhone(input, region string) (string, error) {
	region = strings.ToUpper(strings.TrimSpace(region))
	var cc string
	if region != "" {
		n := phonenumbers.GetCountryCodeForRegion(region)
		if n == 0 {
			return "", fmt.Errorf("%w %q", ErrUnknownRegion, region)
		}
		cc = strconv.Itoa(n)
	}
	return normalizePhone(input, region, cc)
}

// maxE164Digits is E.164's limit. libphonenumber lets some regions (DE)
// have national numbers so long that the whole exceeds it; the Cloud API
// takes E.164 only.
const maxE164Digits = 15

// normalizePhone is NormalizePhone for a region already checked, whose
// country calling code is cc.
func normalizePhone(input, region, cc string) (string, error) {
	e164, err := parsePhone(input, region, cc)
	if err == nil && len(e164)-1 > maxE164Digits {
		return "", ErrTooLong
	}
	return e164, err
}

func parsePhone(input, region, cc string) (string, error) {
	plus, intl, err := cleanPhone(input)
	if err != nil {
		return "", err
	}
	digits := plus[1:]
	if intl {
		return parseE164(plus, "")
	}
	if region == "" {
		e164, err := parseE164(plus, "")
		if err != nil && digits[0] == '0' {
			// A leading 0 is a trunk prefix almost everywhere: this is a
			// national number, and the real problem is the missing region.
			return "", ErrNoCountryCode
		}
		return e164, err
	}
	// Digits that start with the region's own country code are almost always
	// an international number that lost its "+" (spreadsheets drop it). Some
	// regions (DE) accept such long digit strings as national numbers too, so
	// this reading must come first.
	if strings.HasPrefix(digits, cc) {
		if e164, err := parseE164(plus, ""); err == nil {
			return e164, nil
		}
	}
	e164, err := parseE164(digits, region)
	if err == nil {
		return e164, nil
	}
	if digits[0] != '0' {
		if e164, ierr := parseE164(plus, ""); ierr == nil {
			return e164, nil
		}
	}
	return "", err
}

// cleanPhone strips the separators people type and returns the digits
// after a "+", and whether the number carried an international prefix
// ("+" or "00"). A number already written "+digits" comes back as it is,
// not copied.
func cleanPhone(input string) (plus string, intl bool, err error) {
	s := strings.TrimSpace(input)
	if s == "" {
		return "", false, ErrEmpty
	}
	// "(+55) 11 …": the country code in brackets, plus inside.
	if strings.HasPrefix(s, "(+") {
		s = s[1:]
	}
	if s[0] == '+' {
		intl = true
		s = s[1:]
	}
	var buf [32]byte
	b := append(buf[:0], '+')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b = append(b, c)
		case c == ' ' || c == '-' || c == '.' || c == '/' || c == '(' || c == ')' || c == '\t':
		default:
			return "", false, ErrNotANumber
		}
	}
	if !intl && len(b) >= 3 && b[1] == '0' && b[2] == '0' {
		intl = true
		b = append(b[:1], b[3:]...)
	}
	switch n := len(b) - 1; {
	case n == 0:
		return "", false, ErrNotANumber
	case n < minDigits:
		return "", false, ErrTooShort
	case n > maxDigits+2: // +2 leaves room for a national trunk prefix
		return "", false, ErrTooLong
	}
	if t := strings.TrimSpace(input); t[0] == '+' && len(t) == len(b) {
		return t, true, nil // "+digits" as written: nothing was stripped
	}
	return string(b), intl, nil
}

// parseE164 parses number (with region, or with a leading "+" and region "")
// and requires it to be a valid number, naming the reason when it is not.
func parseE164(number, region string) (string, error) {
	if region == "" {
		if fastE164(number[1:]) {
			return number, nil
		}
	} else if e164, ok := fastNational(number, region); ok {
		return e164, nil
	}
	var pn phonenumbers.PhoneNumber
	if err := phonenumbers.ParseToNumber(number, region, &pn); err != nil {
		switch {
		case errors.Is(err, phonenumbers.ErrInvalidCountryCode):
			return "", ErrCountryCode
		case errors.Is(err, phonenumbers.ErrTooShortNSN), errors.Is(err, phonenumbers.ErrTooShortAfterIDD):
			return "", ErrTooShort
		case errors.Is(err, phonenumbers.ErrNumTooLong):
			return "", ErrTooLong
		default:
			return "", ErrNotANumber
		}
	}
	if phonenumbers.IsValidNumber(&pn) {
		return phonenumbers.Format(&pn, phonenumbers.E164), nil
	}
	switch phonenumbers.IsPossibleNumberWithReason(&pn) {
	case phonenumbers.INVALID_COUNTRY_CODE:
		return "", ErrCountryCode
	case phonenumbers.TOO_SHORT:
		return "", ErrTooShort
	case phonenumbers.TOO_LONG:
		return "", ErrTooLong
	}
	return "", fmt.Errorf("%w for %s", ErrInvalidNumber, where(&pn, region))
}

func where(pn *phonenumbers.PhoneNumber, region string) string {
	if region != "" {
		return "region " + region
	}
	return fmt.Sprintf("country code +%d", pn.GetCountryCode())
}

// fastE164 reports whether international digits (no "+") are a valid
// number, so that "+" and the digits are its E.164 form, without
// phonenumbers.Parse, which spends most of its time on regexps that cannot
// match digits alone (extensions, RFC 3966, punctuation), and with
// validNumber instead of phonenumbers.IsValidNumber. It only answers for the plain case - a country
// code, then a national number that does not start with 0 - and only when
// the number is valid; everything else goes through Parse, which also names
// the reason. Parse would keep such a number as it is: it strips a national
// prefix only from a number that is not valid already.
func fastE164(digits string) bool {
	if digits == "" || digits[0] == '0' { // no country code starts with 0
		return false
	}
	for n := 1; n <= 3 && n < len(digits); n++ {
		cc, err := strconv.Atoi(digits[:n])
		if err != nil || len(phonenumbers.GetRegionCodesForCountryCode(cc)) == 0 {
			continue
		}
		// Country codes are prefix-free, so the first match is the only one.
		nsn := digits[n:]
		if nsn[0] == '0' {
			return false
		}
		return validNumber(cc, nsn)
	}
	return false
}
