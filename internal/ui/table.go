package ui

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Table prints rows aligned under a header on a terminal, and as plain
// tab-separated lines without a header when piped, so scripts can cut and
// awk them (the convention of GitHub's gh).
//
// On a terminal the table fits its width the way gh's tableprinter does:
// columns keep their full width unless marked Truncate; when the table is
// too wide, truncatable columns first shrink to a comfortable width (cut
// with "…"), then Optional columns are dropped, then truncatable columns
// shrink further. Piped output always has every column, uncut, in the same
// order, so what scripts read never depends on a terminal.
type Table struct {
	w        io.Writer
	tty      bool
	width    int // 0: unlimited
	header   []string
	rows     [][]string
	truncate []bool
	last     []bool // cut only when nothing else can give way
	optional []int  // column indexes, the first dropped first
	kind     string // piped as records of this kind (AsRecords); "" for tab-separated rows
	records  bool
}

// NewTable starts a table on the streams' Out; without a header it prints
// none on a terminal either (--template's tablerow).
func NewTable(s *IOStreams, header ...string) *Table {
	t := &Table{w: s.Out, tty: s.outTTY, header: header, truncate: make([]bool, len(header)), last: make([]bool, len(header)),
		records: s.records}
	if t.tty {
		t.width = s.TerminalWidth()
	}
	return t
}

// Truncate marks columns whose long texts may be cut to fit the terminal.
func (t *Table) Truncate(names ...string) *Table {
	for _, n := range names {
		if i := slices.Index(t.header, n); i >= 0 {
			t.truncate[i] = true
		}
	}
	return t
}

// TruncateLast marks columns cut only as a last resort: when the table is
// still too wide with every Truncate column at its narrowest and every
// Optional column dropped, so that it never wraps (a wrapped line breaks
// every column under it). A state column whose full text is printed
// elsewhere is such a column.
func (t *Table) TruncateLast(names ...string) *Table {
	for _, n := range names {
		if i := slices.Index(t.header, n); i >= 0 {
			t.last[i] = true
		}
	}
	return t
}

// Kind names what a row is ("account", "campaign"): on streams from
// AsRecords a piped row prints as a record of that kind, each cell under
// its header's RecordKey, every cell kept (an empty one as "").
func (t *Table) Kind(kind string) *Table {
	t.kind = kind
	return t
}

// Optional marks columns that may be left out on a narrow terminal, the
// first named first.
func (t *Table) Optional(names ...string) *Table {
	for _, n := range names {
		if i := slices.Index(t.header, n); i >= 0 {
			t.optional = append(t.optional, i)
		}
	}
	return t
}

// Row adds a row.
//
// Control characters in a cell are shown escaped (a tab as \t, a newline
// as \n): one would split the piped row into more columns or lines than a
// script expects, or garble the terminal. The colour codes of a terminal
// table stay. A record quotes such a value instead (WriteRecord).
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, slices.Clone(cells))
}

func (t *Table) asRecords() bool { return !t.tty && t.records && t.kind != "" }

// escapeControls writes s's control characters as Go escapes; with
// colours, the colour codes (ESC [ … m) are kept.
func escapeControls(s string, colours bool) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if colours {
			if loc := ansi.FindStringIndex(s[i:]); loc != nil && loc[0] == 0 {
				b.WriteString(s[i : i+loc[1]])
				i += loc[1]
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r) // '\t', '\x1b', '\u0085'
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const (
	colGap = 2
	// comfortWidth is as narrow as a truncatable column gets before an
	// optional column is dropped; minWidth as narrow as it ever gets.
	comfortWidth = 20
	minWidth     = 6
)

// Render writes the table.
func (t *Table) Render() error {
	if t.asRecords() {
		keys := make([]string, len(t.header))
		for i, h := range t.header {
			keys[i] = RecordKey(h)
		}
		for _, r := range t.rows {
			pairs := make([]string, 0, 2*len(r))
			for i, c := range r {
				if i < len(keys) {
					pairs = append(pairs, keys[i], c)
				}
			}
			if err := WriteRecord(t.w, t.kind, pairs...); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = escapeControls(c, t.tty)
		}
	}
	if !t.tty {
		for _, r := range rows {
			if _, err := fmt.Fprintln(t.w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	// Align by visible width: colour codes take no room on screen, which
	// text/tabwriter can't know.
	if len(t.header) > 0 {
		rows = append([][]string{t.header}, rows...)
	}
	n := len(t.header)
	for _, r := range rows {
		n = max(n, len(r))
	}
	natural := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			natural[i] = max(natural[i], visibleWidth(c))
		}
	}
	widths, keep := t.fit(natural)
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		var cells []string
		var cw []int
		for i := range n {
			if !keep[i] {
				continue
			}
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if visibleWidth(c) > widths[i] {
				c = runewidth.Truncate(ansi.ReplaceAllString(c, ""), widths[i], "…")
			}
			cells = append(cells, c)
			cw = append(cw, widths[i])
		}
		// No padding after the last non-empty cell.
		last := len(cells) - 1
		for last > 0 && cells[last] == "" {
			last--
		}
		for i := 0; i <= last; i++ {
			b.WriteString(cells[i])
			if i < last {
				b.WriteString(strings.Repeat(" ", cw[i]-visibleWidth(cells[i])+colGap))
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(t.w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// fit returns each column's width and whether it is shown.
func (t *Table) fit(natural []int) ([]int, []bool) {
	widths := slices.Clone(natural)
	keep := make([]bool, len(widths))
	for i := range keep {
		keep[i] = true
	}
	if t.width <= 0 {
		return widths, keep
	}
	total := func() int {
		sum, cols := 0, 0
		for i, w := range widths {
			if keep[i] {
				sum += w
				cols++
			}
		}
		return sum + colGap*max(cols-1, 0)
	}
	shrink := func(cols []bool, floor int) {
		for total() > t.width {
			widest := -1
			for i, w := range widths {
				if keep[i] && i < len(cols) && cols[i] && w > floor && (widest < 0 || w > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				return
			}
			widths[widest]--
		}
	}
	shrink(t.truncate, comfortWidth)
	for _, i := range t.optional {
		if total() <= t.width {
			break
		}
		keep[i] = false
	}
	shrink(t.truncate, minWidth)
	shrink(t.last, minWidth)
	return widths, keep
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func visibleWidth(s string) int { return runewidth.StringWidth(ansi.ReplaceAllString(s, "")) }
