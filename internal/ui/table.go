package ui

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mattn/go-runewidth"
)

// Table prints rows aligned under a header on a terminal, and as plain
// tab-separated lines without a header when piped, so scripts can cut and
// awk them (the convention of GitHub's gh).
type Table struct {
	w      io.Writer
	tty    bool
	header []string
	rows   [][]string
}

// NewTable starts a table on the streams' Out.
func NewTable(s *IOStreams, header ...string) *Table {
	return &Table{w: s.Out, tty: s.outTTY, header: header}
}

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Render writes the table.
func (t *Table) Render() error {
	if !t.tty {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(t.w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	// Align by visible width: colour codes take no room on screen, which
	// text/tabwriter can't know.
	rows := append([][]string{t.header}, t.rows...)
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-visibleWidth(c)+2))
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(t.w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func visibleWidth(s string) int { return runewidth.StringWidth(ansi.ReplaceAllString(s, "")) }
