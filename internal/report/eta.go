package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
)

// ETA is when a campaign's open rows will have gone, by the planner
// (planner.ETA): rates, bursts, caps, quota days, its start, its send
// window and the portfolios' messaging limits all counted. Status, list,
// show and the progress line of `campaign run` all show this one.
type ETA struct {
	// Start is when the first of them may go, when that is later than
	// now: the campaign's start (--at) or its first retry time.
	Start       *time.Time `json:"start,omitempty"`
	Finish      *time.Time `json:"finish,omitempty"` // nil: never, with today's limits
	Seconds     float64    `json:"seconds"`          // from now to Finish
	QuotaResets int        `json:"quota_resets"`     // midnights from now to Finish
	Text        string     `json:"text"`
	// Never is why it never finishes with today's limits, also in Text.
	Never string `json:"never,omitempty"`
	// Error is why there is no forecast (a planner fault), also in Text.
	Error string `json:"error,omitempty"`
}

// Left is the time from now to the finish, and false when it never comes
// or is not known.
func (e *ETA) Left() (time.Duration, bool) {
	if e == nil || e.Finish == nil {
		return 0, false
	}
	return time.Duration(e.Seconds * float64(time.Second)), true
}

// Brief is the ETA in a table's cell, where the whole Text would be cut:
// the time left alone, "never" or "unknown". Text says the rest (the start,
// the quota resets, why never); `campaign show` and piped output print it.
func (e *ETA) Brief() string {
	switch {
	case e == nil:
		return "-"
	case e.Error != "":
		return "unknown"
	case e.Finish == nil:
		return "never"
	}
	return HumanDuration(time.Duration(e.Seconds * float64(time.Second)))
}

// waitingFor is e while the campaign's host waits for the limits it
// shares: nothing goes until Redis answers (or, when it lost its state,
// until a forced quota reset), so the time counts from then, and says so.
func (e *ETA) waitingFor(w *LimitsWait) *ETA {
	if e == nil || e.Finish == nil {
		return e
	}
	after := "after Redis answers"
	if w.Lost {
		after = "after `quota reset --force`"
	}
	d := HumanDuration(time.Duration(e.Seconds * float64(time.Second)))
	if e.Seconds <= 0 {
		d = "at once"
	}
	out := *e
	out.Text = d + " " + after
	return &out
}

// etaFunc returns the function that forecasts any campaign's open rows
// with the accounts (accts, read once), the global bucket and the
// portfolios as they are at r.Now. It gives nil for a campaign nothing
// sends: stored as paused, cancelled or finished, or with no open row.
func (r Reporter) etaFunc(ctx context.Context, accts []campaign.AccountStatus) (
	func(ctx context.Context, c campaign.Campaign, n campaign.Counts, q readmodel.Queue, dropped []readmodel.Dropped) (*ETA, error), error) {
	gl, tokens, on, err := r.Reads.GlobalLimit(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := r.Reads.PortfolioWindows(ctx)
	if err != nil {
		return nil, err
	}
	ports := ReachStates(ws)
	now := r.Now
	return func(ctx context.Context, c campaign.Campaign, n campaign.Counts, q readmodel.Queue, dropped []readmodel.Dropped) (*ETA, error) {
		if c.State != campaign.CampaignRunning || n.Open() == 0 {
			return nil, nil
		}
		lim := planner.Limits{GlobalLimit: gl, Portfolios: ports}
		for _, a := range accts {
			if !slices.ContainsFunc(dropped, func(d readmodel.Dropped) bool { return d.Account == a.Name }) {
				lim.Accounts = append(lim.Accounts, a)
			}
		}
		if on {
			lim.Global = &ratelimit.Bucket{Tokens: tokens, At: now}
		}
		open := planner.Open{Messages: n.Open()}
		var why string // why nothing goes before the forecast's Begin
		if start := c.Schedule.StartAt; start.After(now) {
			open.Begin, why = start, "starts "
		}
		if q.Ready == 0 && q.InFlight == 0 && q.NextDue.After(now) && q.NextDue.After(open.Begin) {
			open.Begin, why = q.NextDue, "nothing is due before "
		}
		if w := c.Schedule.Window; w != nil {
			zones, err := r.Reads.OpenZones(ctx, c.ID)
			if err != nil {
				return nil, err
			}
			if open.Groups, err = planner.Groups(zones); err != nil {
				return nil, fmt.Errorf("campaign %d: %w", c.ID, err)
			}
			open.Window = w
		}
		fc, err := planner.ETA(now, r.Loc, open, lim)
		if err != nil {
			// A forecast that fails is shown in its place: status reads on.
			return &ETA{Text: "unknown: " + err.Error(), Error: err.Error()}, nil
		}
		if fc.Capped || fc.Finish.IsZero() {
			return &ETA{Text: "never with the current limits: " + fc.Reason, Never: fc.Reason}, nil
		}
		fin := fc.Finish.UTC()
		e := &ETA{Finish: &fin, Seconds: fc.Duration.Seconds(), QuotaResets: fc.QuotaResets}
		var notes []string
		if fc.Begin.After(now) {
			b := fc.Begin.UTC()
			e.Start = &b
			notes = append(notes, why+b.Format("2006-01-02 15:04 MST"))
		}
		if fc.QuotaResets > 0 {
			notes = append(notes, fmt.Sprintf("needs %d quota reset%s", fc.QuotaResets, Plural(fc.QuotaResets)))
		}
		e.Text = HumanDuration(fc.Duration)
		if len(notes) > 0 {
			e.Text += " (" + strings.Join(notes, "; ") + ")"
		}
		return e, nil
	}, nil
}

// CampaignETA is the ETA of campaign c as `status` shows it (nil when
// nothing sends it), for the surfaces that show one campaign: `campaign
// show` and the progress line of `campaign run`.
func (r Reporter) CampaignETA(ctx context.Context, c campaign.Campaign) (*ETA, error) {
	accts, err := r.Src.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	eta, err := r.etaFunc(ctx, accts)
	if err != nil {
		return nil, err
	}
	n, err := r.Src.Counts(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	q, err := r.Reads.CampaignQueue(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	dropped, err := r.Reads.DroppedAccounts(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	e, err := eta(ctx, c, n, q, dropped)
	if err != nil || e == nil {
		return e, err
	}
	live, err := r.liveRunners(ctx)
	if err != nil {
		return nil, err
	}
	lw, err := r.limitsWait(ctx, c.ID, live[c.ID] > 0)
	if err != nil || lw == nil {
		return e, err
	}
	return e.waitingFor(lw), nil
}

// limitsWait is the wait of campaign id's live host for the limits it
// shares through Redis, nil when it waits for none.
func (r Reporter) limitsWait(ctx context.Context, id int64, live bool) (*LimitsWait, error) {
	lw, err := r.Reads.LimitsWait(ctx, id)
	if err != nil {
		return nil, err
	}
	if lw.Since.IsZero() || !live || r.Now.Sub(lw.Seen) >= LiveWithin {
		return nil, nil
	}
	return &LimitsWait{Since: lw.Since.UTC(), Lost: lw.Reason == campaign.WaitLimitsLost, Error: lw.Error}, nil
}
