// Package ui is the only way to the terminal: data goes to Out, chatter and
// progress to ErrOut, and whether each is a terminal decides the format.
package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	// width is the terminal's width in columns: 0 asks the terminal (or
	// $COLUMNS), -1 means unlimited (test streams).
	width  int
	outFd  int
	status *StatusWriter
	inTTY  bool
	// Quiet (-q) keeps ErrOut for errors alone: progress, notes, warnings
	// and hints are not printed. Out (results) is unchanged.
	Quiet bool
	// exporter, when set, prints what JSON is given instead (--jq,
	// --template).
	exporter Exporter
	// records: piped tables with a Kind print records (AsRecords).
	records bool
}

// System returns the process's streams with their terminal-ness detected.
func System() *IOStreams {
	st := NewStatusWriter(os.Stderr)
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: st, status: st,
		outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr), inTTY: isTerminal(os.Stdin), outFd: int(os.Stdout.Fd()),
	}
}

// Test returns streams writing to the given buffers, not terminals, of
// unlimited width until SetWidth.
func Test(out, errOut io.Writer) *IOStreams {
	st := NewStatusWriter(errOut)
	return &IOStreams{In: nil, Out: out, ErrOut: st, status: st, width: -1}
}

// SetWidth fixes the terminal's width in columns (tests).
func (s *IOStreams) SetWidth(cols int) { s.width = cols }

// TerminalWidth is the width tables and progress fit on a terminal: the
// terminal's own (stdout's, else stderr's), else $COLUMNS, else 80. It is 0
// for unlimited.
func (s *IOStreams) TerminalWidth() int {
	switch {
	case s.width > 0:
		return s.width
	case s.width < 0:
		return 0
	}
	for _, fd := range []int{s.outFd, int(os.Stderr.Fd())} {
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// Status is where a line that redraws in place (progress) goes: every
// other write to ErrOut clears it first and redraws it after.
func (s *IOStreams) Status() *StatusWriter {
	if s.status == nil || s.ErrOut != io.Writer(s.status) {
		s.status = NewStatusWriter(s.ErrOut)
		s.ErrOut = s.status
	}
	return s.status
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// IsStdoutTTY reports whether data output goes to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether progress output goes to a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// IsStdinTTY reports whether a person can answer a question on In.
func (s *IOStreams) IsStdinTTY() bool { return s.inTTY }

// SetStdinTTY sets In's terminal-ness (tests).
func (s *IOStreams) SetStdinTTY(tty bool) { s.inTTY = tty }

// SetTTY sets both streams' terminal-ness (tests).
func (s *IOStreams) SetTTY(out, errOut bool) { s.outTTY, s.errTTY = out, errOut }

// Infof prints a line of chatter to ErrOut unless Quiet.
func (s *IOStreams) Infof(format string, args ...any) {
	if s.Quiet {
		return
	}
	fmt.Fprintf(s.ErrOut, format+"\n", args...)
}

// Warnf prints a warning to ErrOut unless Quiet: what needs a look but
// did not fail the command (an error would, and prints even then).
func (s *IOStreams) Warnf(format string, args ...any) {
	if s.Quiet {
		return
	}
	prefix := "warning: "
	if s.errTTY {
		prefix = "\x1b[33mwarning:\x1b[0m "
	}
	fmt.Fprintf(s.ErrOut, prefix+format+"\n", args...)
}

// SetExporter makes JSON print through e (--jq, --template); nil prints
// JSON again.
func (s *IOStreams) SetExporter(e Exporter) { s.exporter = e }

// JSON writes v to Out as indented JSON, or through the exporter --jq or
// --template set, which reads v as a script piping --json would.
func (s *IOStreams) JSON(v any) error {
	if s.exporter != nil {
		data, err := jsonValue(v)
		if err != nil {
			return err
		}
		return s.exporter.Export(s, data)
	}
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
