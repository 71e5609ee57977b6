package ui

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
	tw := tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
