// Package ui is the only way to the terminal: data goes to Out, chatter and
// progress to ErrOut, and whether each is a terminal decides the format.
package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	inTTY          bool
	// Quiet silences progress and chatter on ErrOut; errors still print.
	Quiet bool
}

// System returns the process's streams with their terminal-ness detected.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr), inTTY: isTerminal(os.Stdin),
	}
}

// Test returns streams writing to the given buffers, not terminals.
func Test(out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: nil, Out: out, ErrOut: errOut}
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

// Warnf prints a warning to ErrOut, even when Quiet.
func (s *IOStreams) Warnf(format string, args ...any) {
	prefix := "warning: "
	if s.errTTY {
		prefix = "\x1b[33mwarning:\x1b[0m "
	}
	fmt.Fprintf(s.ErrOut, prefix+format+"\n", args...)
}

// JSON writes v to Out as indented JSON.
func (s *IOStreams) JSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
