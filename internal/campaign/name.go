package campaign

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrBadName is a campaign name that can't be one.
var ErrBadName = errors.New("not a campaign name")

// ValidateName says why name can't name a campaign: it is empty, or holds
// a control character or line break — a tab or newline would split the
// tab-separated rows that piped listings print, and the others garble a
// terminal. The error names the character and its position (counted in
// characters from 1).
func ValidateName(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("campaign name %q: %w: it is not valid UTF-8", name, ErrBadName)
	}
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("campaign name %q: %w: it is empty", name, ErrBadName)
	}
	pos := 0
	for _, r := range name {
		pos++
		if what := badNameRune(r); what != "" {
			return fmt.Errorf("campaign name %q: %w: %s at character %d; names are one line of printable text (use spaces)",
				name, ErrBadName, what, pos)
		}
	}
	return nil
}

// NameOf makes a campaign name of any text (a file's name): invalid UTF-8,
// control characters and line breaks become spaces.
func NameOf(s string) string {
	return strings.Map(func(r rune) rune {
		if badNameRune(r) != "" {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
}

// badNameRune says what r is when a name may not hold it.
func badNameRune(r rune) string {
	switch {
	case r == '\t':
		return "a tab"
	case r == '\r':
		return "a carriage return"
	case r == '\n', r == '\v', r == '\f', r == 0x85, r == 0x2028, r == 0x2029:
		return fmt.Sprintf("a line break (U+%04X)", r)
	case unicode.IsControl(r):
		return fmt.Sprintf("a control character U+%04X", r)
	}
	return ""
}
