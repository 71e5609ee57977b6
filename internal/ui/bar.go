package ui

import (
	"io"
	"strings"

	"github.com/schollz/progressbar/v3"
)

// barTheme draws the bar in plain ASCII, which every terminal and log
// viewer shows alike.
var barTheme = progressbar.Theme{Saucer: "=", SaucerPadding: " ", BarStart: "[", BarEnd: "]"}

// renderBar is the bar of the progress line, width cells between its
// brackets, as progressbar draws it. The
// library only draws: Progress decides the width that fits the terminal and
// writes the whole line itself, so that log lines can be printed above it.
func renderBar(width, done, total int) string {
	if total <= 0 {
		total = 1
	}
	b := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(io.Discard),
		progressbar.OptionSetWidth(width),
		progressbar.OptionSetTheme(barTheme),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionThrottle(0),
		progressbar.OptionSetRenderBlankState(true),
	)
	_ = b.Set(min(max(done, 0), total)) // writes to io.Discard: cannot fail
	// The library's line is a carriage return, the percentage and the bar;
	// the counts after the bar say more than a percentage.
	s := strings.TrimSpace(strings.TrimPrefix(b.String(), "\r"))
	if i := strings.Index(s, barTheme.BarStart); i >= 0 {
		s = s[i:]
	}
	return s
}
