package cmd

import (
	"fmt"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/ui"
)

// setHelp makes every command's --help (and usage on a bad command line)
// fit the terminal: cobra's layout, with descriptions, command summaries
// and flag usages wrapped to helpWidth.
func setHelp(root *cobra.Command, streams *ui.IOStreams) {
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), helpText(c, helpWidth(streams)))
	})
	root.SetUsageFunc(func(c *cobra.Command) error {
		_, err := fmt.Fprint(c.OutOrStderr(), usageText(c, helpWidth(streams)))
		return err
	})
}

// helpWidth is the terminal's width when help goes to one, else 80: help
// piped to a pager or a file reads as it would on a standard terminal.
func helpWidth(streams *ui.IOStreams) int {
	if streams.IsStdoutTTY() {
		if w := streams.TerminalWidth(); w > 0 {
			return w
		}
	}
	return 80
}

// helpText is cobra's help: the description, then the usage.
func helpText(c *cobra.Command, width int) string {
	var b strings.Builder
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	if desc = strings.TrimRight(desc, " \t\n"); desc != "" {
		b.WriteString(wrapText(desc, width) + "\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		b.WriteString(usageText(c, width))
	}
	return b.String()
}

// usageText is cobra's default usage template, wrapped to width.
func usageText(c *cobra.Command, width int) string {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n" + wrapLine("  "+c.UseLine(), width, 4))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:\n" + wrapLine("  "+c.NameAndAliases(), width, 4))
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + wrapText(c.Example, width))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				b.WriteString("\n" + summaryLine(sub.Name(), c.NamePadding(), sub.Short, width))
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		b.WriteString("\n\nFlags:\n" + flagUsages(c.LocalFlags(), width))
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString("\n\nGlobal Flags:\n" + flagUsages(c.InheritedFlags(), width))
	}
	if c.HasHelpSubCommands() {
		b.WriteString("\n\nAdditional help topics:")
		for _, sub := range c.Commands() {
			if sub.IsAdditionalHelpTopicCommand() {
				b.WriteString("\n" + summaryLine(sub.CommandPath(), sub.CommandPathPadding(), sub.Short, width))
			}
		}
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\n" + wrapLine(`Use "`+c.CommandPath()+` [command] --help" for more information about a command.`, width, 0))
	}
	return b.String() + "\n"
}

// summaryLine is a command list's line: the name padded to pad, then the
// summary, its continuation lines under the summary's first word.
func summaryLine(name string, pad int, short string, width int) string {
	left := "  " + name + strings.Repeat(" ", max(pad-columns(name), 0)) + " "
	return wrapWords(left, short, width, columns(left))
}

// wrapText wraps each line of s wider than width at spaces; a continuation
// line keeps its line's indentation. Lines that fit are left as written.
func wrapText(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		lines[i] = wrapLine(l, width, indent)
	}
	return strings.Join(lines, "\n")
}

// wrapLine breaks l at spaces into lines of at most width columns, each
// after the first indented by indent; its own indentation stays.
func wrapLine(l string, width, indent int) string {
	lead := len(l) - len(strings.TrimLeft(l, " "))
	return wrapWords(l[:lead], l[lead:], width, indent)
}

// columns is the width of s on a terminal: its length when s is printable
// ASCII, one column a byte; else runewidth's, whose walk of grapheme clusters
// was most of what every command spent building the help topics' text at
// start-up.
func columns(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return runewidth.StringWidth(s)
		}
	}
	return len(s)
}

// wrapWords writes prefix as it is, then the words of text, breaking to a
// new line indented by indent before a word that would pass width. A word
// longer than the room stays whole on its own line.
func wrapWords(prefix, text string, width, indent int) string {
	l := prefix + text
	if width <= 0 || columns(l) <= width {
		return l
	}
	if width-indent < 20 { // too little room beside the indent: less of it
		indent = min(4, indent)
	}
	var b strings.Builder
	b.WriteString(prefix)
	col := columns(prefix)
	first := true
	for _, w := range strings.Fields(text) {
		ww := columns(w)
		switch {
		case first && col+ww <= width || first && col <= indent:
		case first || col+1+ww > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteString(" ")
			col++
		}
		first = false
		b.WriteString(w)
		col += ww
	}
	return b.String()
}

// flagUsages lists fs's flags as pflag does, each usage wrapped beside the
// flags (pflag's own wrapping leaves long words and short columns over
// the width). When the flags leave less than 24 columns, usages go on the
// lines below their flag, indented by 8.
func flagUsages(fs *pflag.FlagSet, width int) string {
	raw := strings.TrimRight(fs.FlagUsagesWrapped(0), " \t\n")
	lines := strings.Split(raw, "\n")
	// Every usage starts in one column, after at least two spaces.
	col := 0
	if l := lines[0]; len(l) > 0 {
		lead := len(l) - len(strings.TrimLeft(l, " "))
		if i := strings.Index(l[lead:], "  "); i >= 0 {
			rest := l[lead+i:]
			col = lead + i + len(rest) - len(strings.TrimLeft(rest, " "))
		}
	}
	for i, l := range lines {
		if col == 0 || len(l) < col {
			lines[i] = wrapLine(l, width, 8)
			continue
		}
		left, usage := l[:col], l[col:]
		switch {
		case width <= 0 || columns(l) <= width:
		case width-col >= 24:
			lines[i] = wrapWords(left, usage, width, col)
		case strings.TrimSpace(left) == "":
			lines[i] = wrapWords("        ", usage, width, 8)
		default:
			lines[i] = strings.TrimRight(left, " ") + "\n" + wrapWords("        ", usage, width, 8)
		}
	}
	return strings.Join(lines, "\n")
}
