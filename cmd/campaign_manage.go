package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
)

// The operator's moves on a campaign: pause, cancel, delete, rename.

func newCampaignPauseCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "pause ID",
		Short: "Pause a campaign; a running `campaign run` stops within seconds",
		Long: `Pause campaign ID. A ` + "`campaign run`" + ` sending it, in any shell or process on
this database, stops claiming within a few seconds: requests already on the
network finish and are recorded, messages it had queued go back to pending,
and it exits with code 4. Nothing is sent until ` + "`wasend campaign resume ID`" + `.`,
		Example: `  wasend campaign pause 3
  wasend campaign resume 3`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			was, err := st.PauseCampaign(cmd.Context(), c.ID, campaign.PausedByOperator)
			if err != nil {
				return err
			}
			if was == campaign.CampaignPaused {
				f.IO.Infof("campaign %d was already paused (%s)", c.ID, c.PauseReason)
				return nil
			}
			f.IO.Infof("campaign %d %q paused; a run sending it stops within seconds. Continue with: wasend campaign resume %d%s",
				c.ID, c.Name, c.ID, dbHint(f))
			return nil
		},
	}
}

func newCampaignCancelCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "End a campaign for good: its pending messages are never sent",
		Long: `Cancel campaign ID. Its pending messages are never sent; what was sent, failed
or is unknown stays on record, and the campaign shows as cancelled. A
` + "`campaign run`" + ` sending it stops within a few seconds (requests already on the
network finish and are recorded) and exits with code 7. Cancelling is final:
the campaign can't be resumed or retried.`,
		Example: `  wasend campaign cancel 3`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			was, err := st.CancelCampaign(cmd.Context(), c.ID)
			if err != nil {
				return err
			}
			if was == campaign.CampaignCancelled {
				f.IO.Infof("campaign %d was already cancelled", c.ID)
				return nil
			}
			n, err := st.Counts(cmd.Context(), c.ID)
			if err != nil {
				return err
			}
			f.IO.Infof("campaign %d %q cancelled: %d pending message(s) will never be sent; sent %d, failed %d, unknown %d stay on record",
				c.ID, c.Name, n[campaign.Pending], n[campaign.Sent], n[campaign.Failed], n[campaign.Unknown])
			if n[campaign.Sending] > 0 {
				f.IO.Infof("%d request(s) in flight finish and are recorded", n[campaign.Sending])
			}
			return nil
		},
	}
}

// errNotConfirmed: the person at the terminal said no.
var errNotConfirmed = errors.New("not confirmed: nothing deleted")

func newCampaignDeleteCmd(f *Factory) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete ID [--yes]",
		Short: "Delete a campaign that is not running; whom it messaged is kept",
		Long: `Delete campaign ID: its recipients' rows, skipped lines and attempts. It asks
first on a terminal; --yes skips the question, and is required when stdin is
not a terminal (scripts, cron).

Whom the campaign messaged, and when, is kept: the same template still goes
to nobody it reached within 24 h, --skip-contacted-within still sees those
sends, and the portfolio's messaging limit still counts them for 24 h, as
Meta does. Refused while a ` + "`campaign run`" + ` sends it: pause or cancel it first.
To stop a campaign but keep its record, cancel it instead.`,
		Example: `  wasend campaign delete 3
  wasend campaign delete 3 --yes`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := parseID(args[0]); err != nil {
				return err
			}
			if !yes && !f.IO.IsStdinTTY() {
				return usagef("campaign delete %s: stdin is not a terminal to confirm on; add --yes to delete without asking", args[0])
			}
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			n, err := st.Counts(cmd.Context(), c.ID)
			if err != nil {
				return err
			}
			if !yes {
				fmt.Fprintf(f.IO.ErrOut, "Delete campaign %d %q (%s, %d recipients: sent %d, failed %d, unknown %d, pending %d)?\n"+
					"  Deleted: its %d recipients' rows, skipped lines and attempts (can't be undone).\n"+
					"  Kept: whom it messaged and when (%d sent): the same template skips them\n"+
					"  for %d h, --skip-contacted-within sees them, the portfolio's reach\n"+
					"  counts them for %d h.\n[y/N] ",
					c.ID, c.Name, c.State, n.Total(), n[campaign.Sent], n[campaign.Failed], n[campaign.Unknown], n[campaign.Pending],
					n.Total(), n[campaign.Sent], int(runner.SameTemplateWindow.Hours()), int(runner.ReachWindow.Hours()))
				if !confirmed(f) {
					return errNotConfirmed
				}
			}
			if err := st.DeleteCampaign(cmd.Context(), c.ID); err != nil {
				return err
			}
			f.IO.Infof("deleted campaign %d %q (%d recipients); kept whom it messaged (%d sent) for the repeat guard and the portfolio's reach",
				c.ID, c.Name, n.Total(), n[campaign.Sent])
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

// confirmed reads a yes from the terminal.
func confirmed(f *Factory) bool {
	if f.IO.In == nil {
		return false
	}
	line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func newCampaignRenameCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "rename ID NAME",
		Short: "Give a campaign a new name",
		Long: `Rename campaign ID. The name is a label for people; the campaign keeps its
number.`,
		Example: `  wasend campaign rename 3 "spring sale, second wave"`,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := campaign.ValidateName(args[1]); err != nil {
				return usageError{fmt.Errorf("campaign rename: %w", err)}
			}
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.RenameCampaign(cmd.Context(), c.ID, args[1]); err != nil {
				return err
			}
			f.IO.Infof("campaign %d renamed from %q to %q", c.ID, c.Name, strings.TrimSpace(args[1]))
			return nil
		},
	}
}
