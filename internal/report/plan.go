package report

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
)

// Plan is what `campaign plan` prints, in the shape of its --json.
type Plan struct {
	File        string        `json:"file"`
	Recipients  int           `json:"recipients"`
	Skipped     int           `json:"skipped"`
	Start       time.Time     `json:"start"`
	Finish      *time.Time    `json:"finish"` // null: never
	Seconds     float64       `json:"duration_seconds"`
	QuotaResets int           `json:"quota_resets"`
	Never       string        `json:"never,omitempty"` // why it would never finish
	Accounts    []PlanShare   `json:"accounts"`
	GlobalLimit *Global       `json:"global_limit"`
	OneMore     []PlanOneMore `json:"one_more"`
	// Reach lists the portfolios whose messaging limit the plan counts.
	Reach []PlanReach `json:"messaging_limits,omitempty"`
	// With --send-window: the window, and the forecast without it (how
	// much the window stretches the campaign).
	SendWindow    string      `json:"send_window,omitempty"`
	WithoutWindow *PlanFinish `json:"without_window,omitempty"`
}

// PlanReach is a portfolio whose messaging limit a plan counts.
type PlanReach struct {
	Name     string   `json:"portfolio"`
	Allowed  int      `json:"distinct_recipients_24h"`
	Accounts []string `json:"accounts"`
}

// PlanFinish is when a what-if finishes.
type PlanFinish struct {
	Finish  *time.Time `json:"finish"` // null: never
	Seconds float64    `json:"duration_seconds"`
}

// PlanShare is what one account sends of a plan.
type PlanShare struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
	Sent int    `json:"sent"`
}

// PlanOneMore is the plan with one more account of Tier.
type PlanOneMore struct {
	Tier          string     `json:"tier"`
	Finish        *time.Time `json:"finish"`
	Seconds       float64    `json:"duration_seconds"`
	SoonerSeconds float64    `json:"sooner_seconds"` // 0 when the base plan never finishes
}

// PlanSource is what a plan reads: the accounts, tiers and limits it
// starts from, and the portfolios' windows through the read models.
type PlanSource interface {
	readmodel.Source
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Location() *time.Location
}

// PlanOptions are what a plan forecasts: the recipients a file gave, and
// when and with which accounts they would be sent.
type PlanOptions struct {
	File                string
	Recipients, Skipped int
	// Zones counts the recipients by their time zones, with a Window.
	Zones  map[string]int
	Window *campaign.Window
	// Accounts names the accounts to plan with (none: every enabled one).
	Accounts   []string
	Now, Start time.Time
	// Warnf says which named accounts are left out, being disabled.
	Warnf func(format string, args ...any)
}

// PlanCampaign forecasts when a campaign would finish with the accounts,
// tiers and limits of src, and how much sooner with one more account of
// each tier (planner.WhatIf).
func PlanCampaign(ctx context.Context, src PlanSource, o PlanOptions) (Plan, error) {
	in, err := planInput(ctx, src, o)
	if err != nil {
		return Plan{}, err
	}
	in.Messages = o.Recipients
	tiers, err := readmodel.New(src).Tiers(ctx)
	if err != nil {
		return Plan{}, err
	}
	w, err := planner.WhatIf(in, o.Window, o.Zones, tiers)
	if err != nil {
		return Plan{}, err
	}
	base := w.Base
	out := Plan{File: o.File, Recipients: o.Recipients, Skipped: o.Skipped, Start: o.Start,
		Seconds: base.Duration.Seconds(), QuotaResets: base.QuotaResets, Never: base.Reason, Accounts: []PlanShare{}, OneMore: []PlanOneMore{}}
	if !base.Capped {
		out.Finish = &base.Finish
	}
	for _, p := range in.Portfolios {
		out.Reach = append(out.Reach, PlanReach{Name: p.Name, Allowed: p.Reach.Allowed(), Accounts: p.Accounts})
	}
	if plain := w.WithoutWindow; plain != nil {
		out.SendWindow = o.Window.String()
		out.WithoutWindow = &PlanFinish{Seconds: plain.Duration.Seconds()}
		if !plain.Capped {
			out.WithoutWindow.Finish = &plain.Finish
		}
	}
	for _, s := range base.PerAccount {
		out.Accounts = append(out.Accounts, PlanShare{s.Name, s.Tier, s.Sent})
	}
	if in.Global != nil {
		out.GlobalLimit = &Global{Rate: in.GlobalLimit.Rate, Burst: in.GlobalLimit.Burst, Tokens: in.Global.TokensAt(in.GlobalLimit, o.Start)}
	}
	for _, more := range w.OneMore {
		m := PlanOneMore{Tier: more.Tier, Seconds: more.Duration.Seconds()}
		if !more.Capped {
			m.Finish = &more.Finish
			if !base.Capped {
				m.SoonerSeconds = (base.Duration - more.Duration).Seconds()
			}
		}
		out.OneMore = append(out.OneMore, m)
	}
	return out, nil
}

// planInput reads the accounts and global limit the forecast starts from:
// every enabled account, or those named. A start on a later quota day
// than now finds the daily counts reset.
func planInput(ctx context.Context, src PlanSource, o PlanOptions) (planner.Input, error) {
	loc := src.Location() // quota days start at its midnights
	in := planner.Input{Start: o.Start, Location: loc}
	accts, err := src.Accounts(ctx)
	if err != nil {
		return in, err
	}
	names := o.Accounts
	for _, n := range names {
		if !slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.Name == n }) {
			return in, fmt.Errorf("account %q: %w (see `wasend account list`)", n, campaign.ErrNotFound)
		}
	}
	newDay := o.Start.In(loc).Format(time.DateOnly) > o.Now.In(loc).Format(time.DateOnly)
	for _, a := range accts {
		if len(names) > 0 && !slices.Contains(names, a.Name) {
			continue
		}
		if a.Disabled {
			if len(names) > 0 && o.Warnf != nil {
				o.Warnf("account %s is disabled: left out of the plan", a.Name)
			}
			continue
		}
		s := planner.FromStatus(a)
		if newDay {
			s.Used = 0
		}
		in.Accounts = append(in.Accounts, s)
	}
	gl, tokens, on, err := readmodel.New(src).GlobalLimit(ctx)
	if err != nil {
		return in, err
	}
	if on {
		in.Global, in.GlobalLimit = &ratelimit.Bucket{Tokens: tokens, At: o.Now}, gl
	}
	ws, err := readmodel.New(src).PortfolioWindows(ctx)
	if err != nil {
		return in, err
	}
	in.Portfolios = ReachStates(ws)
	return in, nil
}
