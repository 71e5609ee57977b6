package top

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
)

// Run shows the dashboard on a terminal (in and out) until q, Ctrl-C or
// the end of ctx, in the alternate screen so the shell's screen comes back
// as it was. It draws at most 10 times a second: the figures change once a
// second, and a key's echo within 0.1 s is instant to a person, while each
// frame costs a wake-up (60 by default) even when nothing changed.
func Run(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	p := tea.NewProgram(New(ctx, o), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen(), tea.WithFPS(10))
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the context ended it (a signal): a clean end
	}
	return err
}
