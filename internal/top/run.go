package top

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
)

// Run shows the dashboard on a terminal (in and out) until q, Ctrl-C or
// the end of ctx, in the alternate screen so the shell's screen comes back
// as it was.
func Run(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	p := tea.NewProgram(New(ctx, o), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the context ended it (a signal): a clean end
	}
	return err
}
