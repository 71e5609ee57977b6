package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newGenCmd is `wasend gen`, hidden: files the release builds from the
// command tree (.goreleaser.yaml runs it), not something an operator runs.
func newGenCmd(f *Factory) *cobra.Command {
	gen := &cobra.Command{
		Use:    "gen",
		Short:  "Generate reference files from the commands",
		Hidden: true,
	}
	gen.AddCommand(&cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR",
		Long: `Write a man page (section 1) for every command into DIR, creating it: the
same descriptions, flags and examples as --help; wasend(1) also lists the exit
codes and the environment. The pages are dated $SOURCE_DATE_EPOCH when set
(reproducible builds), else today.`,
		Example: `  wasend gen man dist/man`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			date := f.Now()
			if s := f.Getenv("SOURCE_DATE_EPOCH"); s != "" {
				sec, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
				}
				date = time.Unix(sec, 0).UTC()
			}
			return genMan(cmd.Root(), args[0], date)
		},
	})
	return gen
}

// genMan writes root's man pages into dir.
func genMan(root *cobra.Command, dir string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	// No "Auto generated … on DATE" line: the pages change only when the
	// commands do.
	var quiet func(c *cobra.Command)
	quiet = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			quiet(sub)
		}
	}
	quiet(root)
	header := &doc.GenManHeader{Title: "WASEND", Section: "1", Date: &date, Source: "wasend " + Version(), Manual: "wasend manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	// The help topics have no page of their own (cobra writes none for a
	// command that does not run): wasend(1) carries them.
	page := filepath.Join(dir, root.Name()+".1")
	out, err := os.OpenFile(page, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	if _, err := out.WriteString(manTopics()); err != nil {
		out.Close()
		return fmt.Errorf("man pages: %s: %w", page, err)
	}
	return out.Close()
}

// manTopics is the exit codes and environment topics as roff sections.
func manTopics() string {
	var b strings.Builder
	b.WriteString(".SH EXIT STATUS\n")
	for _, c := range exitCodeHelp {
		fmt.Fprintf(&b, ".TP\n.B %d\n%s\n", c.code, roffText(c.meaning))
	}
	b.WriteString(".SH ENVIRONMENT\n")
	for _, v := range environmentHelp {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffText(v.name), roffText(v.meaning))
	}
	return b.String()
}

// roffText escapes one line of text for roff: backslashes, minus signs
// (so that flags copy as hyphens), and a leading control character.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
