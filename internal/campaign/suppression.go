package campaign

import (
	"fmt"
	"strings"
	"time"
)

// Suppression is a number that is never messaged: it opted out, asked to
// stop, or is known to be bad. Imports skip it.
type Suppression struct {
	Phone  string // E.164 with '+'
	Reason string // "" reads as "opted out"
	// CreatedAt is when the number was first listed. The store sets it;
	// Suppress ignores the field.
	CreatedAt time.Time
}

// CheckListable is the suppression list's rule for a number: E.164 as
// recipients are normalised to, '+' and 2 to 15 digits, the first not 0. A
// number written otherwise would never match a recipient. It checks the
// shape only; internal/recipients parses numbers. A business-scoped user
// id is listable too: a person known only by one opts out by it.
func CheckListable(p string) error {
	if IsBSUID(p) {
		return nil
	}
	d, ok := strings.CutPrefix(p, "+")
	if ok && len(d) >= 2 && len(d) <= 15 && d[0] != '0' && strings.Trim(d, "0123456789") == "" {
		return nil
	}
	return fmt.Errorf("suppress %q: not an E.164 number or a business-scoped user id", p)
}
