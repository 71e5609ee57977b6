package campaign

import (
	"fmt"
	"strings"
)

// A business-scoped user id (BSUID) names a WhatsApp user within one
// business portfolio, for people known by a username rather than a phone
// number (docs/cloud-api.md#business-scoped-user-ids): an ISO 3166 alpha-2
// country code, a period, and up to 128 letters or digits, as in
// US.13491208655302741918. A parent BSUID, shared by linked portfolios,
// has ENT. after the country code. wasend keeps a BSUID where it keeps a
// phone number (a message's recipient, the suppression list), and sends it
// in the request's recipient field, never in to.

// MaxBSUIDLen bounds the part after the country code (and ENT.).
const MaxBSUIDLen = 128

// IsBSUID reports whether s is shaped like a BSUID (or a parent BSUID).
func IsBSUID(s string) bool { return CheckBSUID(s) == "" }

// LooksLikeBSUID reports whether s was meant as a BSUID: two letters and a
// period. A phone number never starts so; CheckBSUID says what is wrong
// with one that is not well formed.
func LooksLikeBSUID(s string) bool {
	return len(s) >= 3 && isLetter(s[0]) && isLetter(s[1]) && s[2] == '.'
}

// CheckBSUID returns why s is not a BSUID, "" when it is.
func CheckBSUID(s string) string {
	if !LooksLikeBSUID(s) {
		return "not a business-scoped user id (want a country code, a period and letters or digits, e.g. US.13491208655302741918)"
	}
	if !isUpper(s[0]) || !isUpper(s[1]) {
		return "user id: the country code must be two capital letters"
	}
	id := s[3:]
	if rest, ok := strings.CutPrefix(id, "ENT."); ok {
		id = rest
	}
	switch {
	case id == "":
		return "user id: nothing after the country code"
	case len(id) > MaxBSUIDLen:
		return fmt.Sprintf("user id: %d characters after the country code, the limit is %d", len(id), MaxBSUIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isLetter(c) && (c < '0' || c > '9') {
			return fmt.Sprintf("user id: %q is not a letter or digit", rune(c))
		}
	}
	return ""
}

func isLetter(c byte) bool { return isUpper(c) || c >= 'a' && c <= 'z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }

// IdentityLink says a phone number and a BSUID are one person, as a
// webhook showed them together (contacts[].wa_id and user_id, a status's
// recipient_id and recipient_user_id).
type IdentityLink struct {
	Phone  string // E.164 with '+'
	UserID string // the BSUID
}

// Pairs reports whether l pairs a phone number with a user id, the only
// link worth keeping: a body may name two ids, or a number in no shape a
// recipient is normalised to, and neither says who a person is.
func (l IdentityLink) Pairs() bool {
	return !IsBSUID(l.Phone) && CheckListable(l.Phone) == nil && IsBSUID(l.UserID)
}
