package top

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/ui"
)

// View draws the dashboard in its terminal's width and height: tables fit
// the width as status's do (columns that don't fit are dropped, long texts
// cut, never wrapped), and rows that don't fit the height give way, the
// longest table's first, the selected campaign's never.
func (m *Model) View() string {
	w, h := max(m.width, 20), max(m.height, 6)
	head := m.header()
	foot := m.footer(w)
	var secs []section
	if m.at.IsZero() {
		secs = append(secs, section{lines: []string{"reading the database…"}})
	} else {
		secs = append(secs, m.campaigns(w), m.accounts(w))
		if p, ok := m.portfolios(w); ok {
			secs = append(secs, p)
		}
		secs = append(secs, section{lines: []string{m.webhooks()}, keep: -1, gap: true})
	}
	body := fit(secs, h-len(head)-len(foot))
	lines := append(append(head, body...), foot...)
	for i, l := range lines {
		if runewidth.StringWidth(l) > w {
			lines[i] = runewidth.Truncate(l, w, "…")
		}
	}
	return strings.Join(lines, "\n")
}

func (m *Model) header() []string {
	at := "--:--:--"
	if !m.at.IsZero() {
		at = m.at.In(m.o.Loc).Format(time.TimeOnly)
	}
	return []string{"wasend top  " + at + "  " + m.status.Database}
}

// footer is the last refresh's error or the last move's answer (or the
// cancel's question), on up to two lines, then the keys.
func (m *Model) footer(w int) []string {
	var line string
	switch {
	case m.confirm != 0:
		c, _ := m.current()
		line = fmt.Sprintf("Cancel campaign %d %q for good? Its %d pending messages are never sent. y/N", c.ID, c.Name, c.Pending+c.Sending)
	case m.err != nil && m.at.IsZero():
		line = "can't read the status: " + oneLine(m.err.Error())
	case m.err != nil:
		line = "refresh failed (figures of " + m.at.In(m.o.Loc).Format(time.TimeOnly) + "): " + oneLine(m.err.Error())
	default:
		line = m.note
	}
	out := wrap(line, w, 2)
	if m.help {
		return append(out,
			"↑↓ or k j select · p pause: a run sending it stops within seconds · q quit",
			"r unpause (`wasend campaign resume ID` sends it) · c cancel for good, after y",
			"figures as `wasend status` reads them, every "+m.every.Round(100*time.Millisecond).String()+"; rate: rows done per second")
	}
	return append(out, "↑↓ select  p pause  r resume  c cancel  q quit  ? help")
}

// wrap breaks s at spaces into at most n lines of w columns (the last one
// cut); one empty line for an empty s.
func wrap(s string, w, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case runewidth.StringWidth(line+" "+word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	out = append(out, line)
	if len(out) > n {
		out[n-1] = strings.Join(out[n-1:], " ") // cut to w by View
		out = out[:n]
	}
	return out
}

// section is a titled table whose rows may give way to the height; keep is
// the row that must stay (the selection), -1 for none.
type section struct {
	lines []string // the title and the table's header, kept whole
	rows  []string
	keep  int
	gap   bool // a blank line before it
}

// fit cuts the sections' rows to height lines: the section with the most
// rows gives one up at a time, around its kept row, and says how many it
// hides.
func fit(secs []section, height int) []string {
	size := func() int {
		n := 0
		for _, s := range secs {
			n += len(s.lines) + len(s.rows)
			if s.gap {
				n++
			}
		}
		return n
	}
	hidden := make([]int, len(secs))
	for size()+count(hidden) > height {
		big := -1
		for i, s := range secs {
			if len(s.rows) > 1 && (big < 0 || len(s.rows) > len(secs[big].rows)) {
				big = i
			}
		}
		if big < 0 {
			break
		}
		s := &secs[big]
		if s.keep > 0 && s.keep >= len(s.rows)-1-s.keep {
			s.rows, s.keep = s.rows[1:], s.keep-1
		} else {
			s.rows = s.rows[:len(s.rows)-1]
		}
		hidden[big]++
	}
	var out []string
	for i, s := range secs {
		if s.gap {
			out = append(out, "")
		}
		out = append(out, s.lines...)
		out = append(out, s.rows...)
		if hidden[i] > 0 {
			out = append(out, fmt.Sprintf("  … %d more", hidden[i]))
		}
	}
	if len(out) > height {
		out = out[:max(height, 0)]
	}
	return out
}

// count is how many "… N more" lines the hidden rows take.
func count(hidden []int) int {
	n := 0
	for _, h := range hidden {
		if h > 0 {
			n++
		}
	}
	return n
}

// table renders a terminal table w columns wide: its header line and its
// rows.
func table(w int, header []string, rows [][]string, shape func(*ui.Table)) (string, []string) {
	var b bytes.Buffer
	s := ui.Test(&b, io.Discard)
	s.SetTTY(true, false)
	s.SetWidth(w)
	t := ui.NewTable(s, header...)
	shape(t)
	for _, r := range rows {
		t.Row(r...)
	}
	_ = t.Render() // a bytes.Buffer takes every write
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	return lines[0], lines[1:]
}

func (m *Model) campaigns(w int) section {
	cs := m.shown()
	title := "Campaigns"
	if n := len(m.status.Campaigns) - len(cs); n > 0 {
		title += fmt.Sprintf(" (%d ended earlier not shown)", n)
	}
	if len(cs) == 0 {
		return section{lines: []string{title, "  none: import one with `wasend campaign import FILE" + m.o.Flags + "`"}, keep: -1, gap: true}
	}
	rows := make([][]string, 0, len(cs))
	keep := -1
	for i, c := range cs {
		mark := " "
		if c.ID == m.selected {
			mark, keep = ">", i
		}
		rate := "-"
		if r, ok := m.pace(c.ID); ok && report.Sending([]report.Campaign{c}) {
			rate = ui.FormatRate(r)
		}
		rows = append(rows, []string{mark, strconv.FormatInt(c.ID, 10), c.Name, c.State, progress(c),
			strconv.Itoa(c.Sent), strconv.Itoa(c.Failed), strconv.Itoa(c.Pending + c.Sending), rate, c.ETA.Brief()})
	}
	head, body := table(w, []string{" ", "ID", "NAME", "STATE", "PROGRESS", "SENT", "FAILED", "PENDING", "RATE", "ETA"}, rows,
		func(t *ui.Table) {
			t.Truncate("NAME").TruncateLast("STATE", "ETA").Optional("FAILED", "PENDING", "SENT")
		})
	return section{lines: []string{title, head}, rows: body, keep: keep, gap: true}
}

// progress is a campaign's rows done out of its total: a bar and a share.
func progress(c report.Campaign) string {
	const width = 10
	if c.Total == 0 {
		return strings.Repeat("░", width) + "   -"
	}
	share := float64(done(c)) / float64(c.Total)
	full := int(share * width)
	return strings.Repeat("█", full) + strings.Repeat("░", width-full) + fmt.Sprintf(" %3d%%", int(share*100))
}

func (m *Model) accounts(w int) section {
	rows := make([][]string, 0, len(m.status.Accounts))
	for _, a := range m.status.Accounts {
		tokens := strconv.FormatFloat(a.Tokens, 'f', 1, 64)
		if m.status.Shared && !a.TokensShared {
			tokens = "-" // status's mark: no shared figure
		}
		rate := ui.FormatRate(a.EffectiveRate)
		if a.EffectiveRate < a.Rate {
			rate += " of " + ui.FormatRate(a.Rate)
		}
		rows = append(rows, []string{a.Name, a.State, tokens, strconv.Itoa(a.SentToday) + "/" + strconv.Itoa(a.DailyCap), rate,
			a.Tier, a.Portfolio})
	}
	title := "Accounts"
	if len(rows) == 0 {
		return section{lines: []string{title, "  none: add one with `wasend account add" + m.o.Flags + "`"}, keep: -1, gap: true}
	}
	lines := []string{title}
	if m.status.Shared {
		lines[0] += " (tokens shared between hosts through --limits)"
		if m.status.SharedWhy != "" {
			lines = append(lines, "  not all shown: "+oneLine(m.status.SharedWhy))
		}
	}
	head, body := table(w, []string{"NAME", "STATE", "TOKENS", "TODAY/CAP", "RATE", "TIER", "PORTFOLIO"}, rows,
		func(t *ui.Table) { t.Truncate("NAME", "PORTFOLIO").TruncateLast("STATE").Optional("PORTFOLIO", "TIER") })
	return section{lines: append(lines, head), rows: body, keep: -1, gap: true}
}

// portfolios is the reach of the portfolios with a messaging limit, as
// status lists them; false when none has one.
func (m *Model) portfolios(w int) (section, bool) {
	var rows [][]string
	for _, p := range m.status.Portfolios {
		if p.Limit == nil && p.Own {
			continue
		}
		reach, limit, frees := strconv.Itoa(p.Used24h), "none", "-"
		if p.Limit != nil {
			reach += "/" + strconv.Itoa(*p.Allowed)
			limit = strconv.Itoa(*p.Limit)
		}
		if p.FreesAt != nil {
			frees = p.FreesAt.In(m.o.Loc).Format("01-02 15:04")
		}
		rows = append(rows, []string{p.Name, reach, limit, frees, strings.Join(p.Accounts, ",")})
	}
	if len(rows) == 0 {
		return section{}, false
	}
	head, body := table(w, []string{"PORTFOLIO", "REACH 24H", "LIMIT", "FULL UNTIL", "ACCOUNTS"}, rows,
		func(t *ui.Table) { t.Truncate("PORTFOLIO", "ACCOUNTS").Optional("ACCOUNTS") })
	return section{lines: []string{"Portfolios (distinct recipients in 24 h)", head}, rows: body, keep: -1, gap: true}, true
}

// webhooks is the inbox's lag: how long its oldest unapplied body waits.
func (m *Model) webhooks() string {
	b := m.inbox
	switch {
	case b.LatestAt.IsZero():
		return "Webhooks: none received"
	case b.Waiting == 0:
		return "Webhooks: all applied, lag 0 s; latest body " + b.LatestAt.In(m.o.Loc).Format(time.TimeOnly)
	}
	return fmt.Sprintf("Webhooks: %d waiting, lag %s; latest body %s", b.Waiting,
		ui.FormatDuration(b.Lag(m.at)), b.LatestAt.In(m.o.Loc).Format(time.TimeOnly))
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
