package doctor

import (
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// indent is where a finding's check name, and its detail lines, start.
const indent = 6

// maxCheckWidth bounds the check-name column: a long account name is cut
// rather than pushing every summary right.
const maxCheckWidth = 26

// Write prints the report for a person: one line a finding, a warning's or
// failure's detail wrapped under it and its fix on a line of its own
// (never wrapped, so it pastes whole), then the verdict. width is the
// terminal's (0: unlimited): a line that does not fit is cut, except the
// fix; colour marks the levels.
func (r Report) Write(w io.Writer, width int, colour bool) error {
	checkWidth := 0
	for _, f := range r.Findings {
		checkWidth = max(checkWidth, runewidth.StringWidth(f.Check))
	}
	checkWidth = min(checkWidth, maxCheckWidth)
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(levelText(f.Level, colour))
		line := runewidth.FillRight(runewidth.Truncate(f.Check, checkWidth, "…"), checkWidth) + "  " + f.Summary
		if width > 0 {
			line = runewidth.Truncate(line, width-indent, "…")
		}
		b.WriteString(line + "\n")
		if f.Level == OK {
			continue
		}
		for _, d := range f.Details {
			for _, l := range wrap(d, width-indent) {
				b.WriteString(strings.Repeat(" ", indent) + l + "\n")
			}
		}
		if f.Fix != "" {
			b.WriteString(strings.Repeat(" ", indent) + "fix: " + f.Fix + "\n")
		}
	}
	b.WriteString(r.Verdict + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func levelText(l Level, colour bool) string {
	text, sgr := "ok", "32"
	switch l {
	case Warn:
		text, sgr = "warn", "33"
	case Fail:
		text, sgr = "FAIL", "31"
	}
	pad := strings.Repeat(" ", indent-len(text))
	if colour {
		return "\x1b[" + sgr + "m" + text + "\x1b[0m" + pad
	}
	return text + pad
}

// wrap breaks s into lines of at most width columns at spaces (a word
// longer than that stays whole); width <= 0 is one line.
func wrap(s string, width int) []string {
	if width <= 0 {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		if cur.Len() > 0 && runewidth.StringWidth(cur.String())+1+runewidth.StringWidth(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
