package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/top"
	"github.com/wasend/wasend/internal/ui"
)

func newTopCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "top",
		Short: "A live dashboard of campaigns, accounts, reach and webhooks, with keys to pause, resume and cancel",
		Long: `Show, refreshed every second (less often when the reads are slow), what
status shows as it moves: each campaign's state, progress, pace and ETA; each
account's state (cooling down until T, …), tokens, sent today of its daily cap
and effective rate; the portfolios' reach; and how far the webhook inbox is
behind. Under --limits the tokens are the ones every host shares.

Keys: ↑/↓ (or k/j) select a campaign; p pauses it and r unpauses it, as
` + "`campaign pause`" + ` and ` + "`campaign resume`" + ` do (top sends nothing: a paused run has
exited, and ` + "`campaign resume ID`" + ` sends it again); c cancels it for good after a
y; ? explains the keys; q or Ctrl-C quits.

It needs a terminal; for a view that prints, use ` + "`wasend status --watch`" + `.`,
		Example: `  wasend top
  wasend top --sandbox`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !f.IO.IsStdoutTTY() {
				return usagef("wasend top draws on a terminal and stdout is not one; for output that prints (a pipe, a log), use `wasend status --watch%s`", dbHint(f))
			}
			ctx := cmd.Context()
			return f.withStore(ctx, func(st driver.Driver) error {
				return top.Run(ctx, f.IO.In, f.IO.Out, topOptions(f, st))
			})
		},
	}
}

// topOptions are the dashboard's reads and moves on st: status's reads,
// the inbox's backlog, and the operator's moves of `campaign pause`,
// `resume` (after the same template check) and `cancel`.
func topOptions(f *Factory, st driver.Driver) top.Options {
	reads := readmodel.New(st)
	return top.Options{
		Status: func(ctx context.Context) (top.Reading, error) {
			out, shared, err := readStatus(ctx, f, st, top.Reads)
			return top.Reading{Status: out, Shared: shared.On, SharedWhy: shared.Why}, err
		},
		Inbox: reads.WebhookBacklog,
		Moves: topMoves{st},
		Now:   f.Now,
		Loc:   f.location(),
		Flags: dbHint(f),
	}
}

// topMoves are the store's moves, a resume checked as `campaign resume`
// checks it: a template paused or edited since the import stays paused.
type topMoves struct{ driver.Driver }

func (m topMoves) ResumeCampaign(ctx context.Context, id int64) (string, error) {
	// Its notes would draw over the dashboard; its error says it all.
	if err := runner.CheckResumedTemplate(ctx, m.Driver, ui.Test(io.Discard, io.Discard), id); err != nil {
		return "", err
	}
	return m.Driver.ResumeCampaign(ctx, id)
}
