package cmd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// statusJSON is the documented shape of `wasend status --json`.
type statusJSON struct {
	Database    string         `json:"database"`
	Accounts    []accountJSON  `json:"accounts"`
	GlobalLimit *globalJSON    `json:"global_limit"`
	Campaigns   []campaignJSON `json:"campaigns"`
}

type globalJSON struct {
	Rate   float64 `json:"rate_per_second"`
	Burst  int     `json:"burst"`
	Tokens float64 `json:"tokens"`
}

type campaignJSON struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	State       string     `json:"state"`
	PauseReason string     `json:"pause_reason,omitempty"`
	Source      string     `json:"source"`
	Total       int        `json:"total"`
	Sent        int        `json:"sent"`
	Pending     int        `json:"pending"`
	Sending     int        `json:"sending"`
	Failed      int        `json:"failed"`
	Unknown     int        `json:"unknown"`
	Skipped     int        `json:"skipped"`
	CreatedAt   time.Time  `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	// Health: share of requests throttled (overall and last hour), and
	// requests per message tried.
	ThrottleRate     float64       `json:"throttle_rate"`
	ThrottleRateHour float64       `json:"throttle_rate_1h"`
	AvgAttempts      float64       `json:"avg_attempts"`
	DroppedAccounts  []droppedJSON `json:"dropped_accounts,omitempty"`
}

// campaignsJSON reads every campaign with its counts and health.
func campaignsJSON(ctx context.Context, st *store.Store) ([]campaignJSON, error) {
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	out := []campaignJSON{}
	for _, c := range camps {
		n, err := st.Counts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		stats, err := st.CampaignStats(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		dropped, err := st.DroppedAccounts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		cj := toCampaignJSON(c, n)
		cj.ThrottleRate, cj.ThrottleRateHour, cj.AvgAttempts = stats.ThrottleRate(), stats.HourThrottleRate(), stats.AvgAttempts()
		for _, d := range dropped {
			cj.DroppedAccounts = append(cj.DroppedAccounts, droppedJSON{d.Account, d.Reason, d.ErrorCode, d.At.UTC()})
		}
		out = append(out, cj)
	}
	return out, nil
}

type droppedJSON struct {
	Account   string    `json:"account"`
	Reason    string    `json:"reason"`
	ErrorCode int       `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

func toCampaignJSON(c campaign.Campaign, n campaign.Counts) campaignJSON {
	out := campaignJSON{
		ID: c.ID, Name: c.Name, State: string(c.State), PauseReason: c.PauseReason, Source: c.Source,
		Total: n.Total(), Sent: n[campaign.Sent], Pending: n[campaign.Pending], Sending: n[campaign.Sending],
		Failed: n[campaign.Failed], Unknown: n[campaign.Unknown], Skipped: c.Skipped, CreatedAt: c.CreatedAt.UTC(),
	}
	if !c.FinishedAt.IsZero() {
		t := c.FinishedAt.UTC()
		out.FinishedAt = &t
	}
	return out
}

func newStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show accounts, limits and campaigns",
		Long: `Show each account (tier, rate, burst, tokens now, sent today / daily cap,
state) and each campaign (total, sent, pending, failed, unknown, state).

Account states: ok; waiting (no token this instant); capped (daily cap reached,
until the next quota reset); disabled.`,
		Example: `  wasend status
  wasend status --json | jq '.campaigns[] | select(.state == "running")'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := f.Store(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			accts, err := st.Accounts(ctx)
			if err != nil {
				return err
			}
			gl, tokens, on, err := st.GlobalLimit(ctx)
			if err != nil {
				return err
			}
			camps, err := campaignsJSON(ctx, st)
			if err != nil {
				return err
			}
			out := statusJSON{Database: st.Path(), Accounts: accountsJSON(accts), Campaigns: camps}
			if on {
				out.GlobalLimit = &globalJSON{Rate: gl.Rate, Burst: gl.Burst, Tokens: tokens}
			}
			if asJSON {
				return f.IO.JSON(out)
			}
			if f.IO.IsStdoutTTY() {
				f.IO.Out.Write([]byte("Accounts\n"))
			}
			if err := printAccounts(f.IO, accts); err != nil {
				return err
			}
			if f.IO.IsStdoutTTY() {
				g := "off"
				if on {
					g = formatRate(gl.Rate) + " burst " + strconv.Itoa(gl.Burst)
				}
				f.IO.Out.Write([]byte("\nGlobal limit: " + g + "\n\nCampaigns\n"))
			}
			return printCampaigns(f, out.Campaigns)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printCampaigns(f *Factory, camps []campaignJSON) error {
	t := newTable(f, "ID", "NAME", "STATE", "TOTAL", "SENT", "PENDING", "FAILED", "UNKNOWN", "SKIPPED", "THROTTLED", "ATTEMPTS/MSG", "CREATED")
	for _, c := range camps {
		state := c.State
		if c.PauseReason != "" {
			state += ": " + c.PauseReason
		}
		t.Row(strconv.FormatInt(c.ID, 10), c.Name, state, strconv.Itoa(c.Total), strconv.Itoa(c.Sent),
			strconv.Itoa(c.Pending+c.Sending), strconv.Itoa(c.Failed), strconv.Itoa(c.Unknown), strconv.Itoa(c.Skipped),
			flag(fmt.Sprintf("%.1f%%", c.ThrottleRate*100), c.ThrottleRate >= 0.01, f.IO.IsStdoutTTY()),
			flag(fmt.Sprintf("%.2f", c.AvgAttempts), c.AvgAttempts >= 1.5, f.IO.IsStdoutTTY()),
			c.CreatedAt.Local().Format("2006-01-02 15:04"))
	}
	if len(camps) == 0 && f.IO.IsStdoutTTY() {
		f.IO.Out.Write([]byte("no campaigns yet\n"))
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, c := range camps {
		for _, d := range c.DroppedAccounts {
			f.IO.Warnf("campaign %d: account %s stopped: %s", c.ID, d.Account, d.Reason)
		}
	}
	return nil
}

// flag marks a value outside its healthy range: red on a terminal, a "!"
// when piped.
func flag(v string, bad, tty bool) string {
	switch {
	case !bad:
		return v
	case tty:
		return "\x1b[31m" + v + "\x1b[0m"
	}
	return v + "!"
}
