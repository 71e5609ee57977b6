// Package hint builds the wasend command lines that messages suggest, so
// that each one works when pasted: it carries the global flags the
// operator ran with and quotes every word for a POSIX shell.
package hint

import (
	"net/url"
	"strings"
)

// Flags are the global flags that reach a run's state: what the operator
// gave on the command line. What came from the environment (WASEND_DB,
// WASEND_LIMITS) is left out; a pasted line inherits it by itself.
type Flags struct {
	DB      string // --db
	Sandbox bool   // --sandbox
	Limits  string // --limits
}

// String is the flags as they end a hinted command line, each with its
// leading space. A --limits URL's password is shown redacted, never in the
// clear: the operator fills it in, or sets WASEND_LIMITS instead.
func (f Flags) String() string {
	var b strings.Builder
	if f.DB != "" {
		b.WriteString(" --db " + Quote(f.DB))
	}
	if f.Sandbox {
		b.WriteString(" --sandbox")
	}
	if u, err := url.Parse(f.Limits); f.Limits != "" && err == nil {
		// A URL that does not parse was refused before any hint.
		b.WriteString(" --limits " + Quote(u.Redacted()))
	}
	return b.String()
}

// Quote is s as one word of a POSIX shell's command line.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// StoredFlags ends the command of a note written into the database (by
// the shared claim, which cannot know the flags of whoever reads it): the
// writer puts it where the flags go, and Fill replaces it.
const StoredFlags = " --limits URL"

// Fill makes a stored note's command line runnable for the reader: its
// " --limits URL" placeholder becomes the reader's own flags. A reader who
// gave no limits URL (neither --limits nor WASEND_LIMITS) gets the need
// for one in words after the command, not a placeholder inside it.
func Fill(note, flags string, limitsSet bool) string {
	with := flags + "`"
	if !limitsSet {
		with += " (with --limits naming the shared Redis)"
	}
	return strings.ReplaceAll(note, StoredFlags+"`", with)
}
