package ui

import (
	"bytes"
	"io"
	"sync"
)

// StatusWriter keeps one line at the bottom of a terminal that redraws in
// place, with everything else written through it printed above the line:
// the line is cleared, the text printed, the line drawn again — so a log
// line is never glued onto a progress bar (the model is restic's
// termstatus). With no line set it passes writes through unchanged.
type StatusWriter struct {
	mu   sync.Mutex
	w    io.Writer
	line string // shown now; "" for none
	// open is set while the text above the line lacks its final newline:
	// the line waits for it rather than be glued on.
	open bool
}

// NewStatusWriter writes to w.
func NewStatusWriter(w io.Writer) *StatusWriter { return &StatusWriter{w: w} }

const clearLine = "\r\x1b[K"

// Write prints p above the status line.
func (s *StatusWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line == "" {
		return s.w.Write(p)
	}
	if !s.open {
		if _, err := io.WriteString(s.w, clearLine); err != nil {
			return 0, err
		}
	}
	n, err := s.w.Write(p)
	if err != nil {
		return n, err
	}
	s.open = len(p) > 0 && !bytes.HasSuffix(p, []byte("\n"))
	if !s.open {
		_, err = io.WriteString(s.w, s.line)
	}
	return n, err
}

// Set draws line in place of the current one; "" removes it.
func (s *StatusWriter) Set(line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		// Finish the caller's unfinished line first.
		if _, err := io.WriteString(s.w, "\n"); err != nil {
			return err
		}
		s.open = false
	}
	var err error
	switch {
	case line != "":
		_, err = io.WriteString(s.w, clearLine+line)
	case s.line != "":
		_, err = io.WriteString(s.w, clearLine)
	}
	s.line = line
	return err
}

// Done leaves the current line on the screen, ends it, and stops
// redrawing it.
func (s *StatusWriter) Done() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line == "" {
		return nil
	}
	s.line, s.open = "", false
	_, err := io.WriteString(s.w, "\n")
	return err
}
