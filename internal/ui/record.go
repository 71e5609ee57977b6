package ui

import (
	"io"
	"strconv"
	"strings"
	"unicode"
)

// Records are the piped form of output that mixes several kinds of lines
// (status: accounts, their health, campaigns…; plan: its figures and two
// tables): one line per record, `kind=K key=value …`, in the logfmt style
// the piped log (log/slog's text handler) uses, so a script picks its kind
// with grep and reads a field by its name, whatever order or columns a
// later version adds.
//
// A value is quoted, Go style, when it is empty or holds a space, '=', '"'
// or a character that is not printable: the same rule as slog's. A table's
// cells come with their control characters already shown escaped (Row).

// WriteRecord writes one record: kind=K then each key=value of pairs,
// given as key, value, key, value….
func WriteRecord(w io.Writer, kind string, pairs ...string) error {
	var b strings.Builder
	b.WriteString("kind=" + logfmtValue(kind))
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(" " + pairs[i] + "=" + logfmtValue(pairs[i+1]))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

func logfmtValue(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == ' ' || r == '=' || r == '"' || !unicode.IsPrint(r)
	}) {
		return strconv.Quote(s)
	}
	return s
}

// RecordKey is the key a table's header names in a record: lower case,
// every run of other characters one "_" ("THROTTLED 1H/ALL" →
// "throttled_1h_all").
func RecordKey(header string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(header) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
			continue
		}
		sep = true
	}
	return b.String()
}

// AsRecords returns streams on the same terminal whose piped tables print
// their rows as records of the table's Kind (tables without one stay
// tab-separated). Commands whose output mixes kinds print through them;
// the same printers keep plain rows elsewhere (`campaign list`).
func (s *IOStreams) AsRecords() *IOStreams {
	c := *s
	c.records = true
	return &c
}
