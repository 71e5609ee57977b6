package ui

import (
	"encoding/json"
	"math"
	"time"
)

// ProgressFigures are what every line of `campaign run --progress json`
// says: the counts, done and left.
type ProgressFigures struct {
	Type        string    `json:"type"` // "status" or "summary"
	Time        time.Time `json:"time"`
	Campaign    int64     `json:"campaign"`
	Label       string    `json:"label"`
	PercentDone float64   `json:"percent_done"`
	Total       int       `json:"total"`
	Sent        int       `json:"sent"`
	Failed      int       `json:"failed"`
	Unknown     int       `json:"unknown"`
	Pending     int       `json:"pending"`
	PutBack     int       `json:"put_back"`
	Retries     int       `json:"retries"`
}

// ProgressStatus is one line of `campaign run --progress json`: the
// counts so far, the pace and the time left, written every second. Its
// figures are the ones the terminal's line shows; Pending is what is left
// (total less sent, failed and unknown).
type ProgressStatus struct {
	ProgressFigures
	// Rate is messages finished per second over the last 15 s (0: no pace
	// yet, or waiting on caps).
	Rate float64 `json:"rate"`
	// SecondsRemaining is the ETA status shows, counted to now; null when
	// there is none (not made yet, or never with the current limits:
	// Never says so).
	SecondsRemaining *float64 `json:"seconds_remaining"`
	Never            bool     `json:"never,omitempty"`
	// Waiting is why nothing is sent now, "" while sending.
	Waiting string `json:"waiting"`
}

// ProgressSummary is the last line of `campaign run --progress json`: the
// database's counts when the run ended, the figures `campaign show
// --json` prints (Counts is its counts, every state; Pending is its
// pending rows).
type ProgressSummary struct {
	ProgressFigures
	Expired int            `json:"expired"`
	Counts  map[string]int `json:"counts"`
}

// SetStates gives the database's counts by state when the run ends (as
// `campaign show --json` counts them), for the summary line.
func (p *Progress) SetStates(counts map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.states = counts
}

func percent(done, total int) float64 {
	if total <= 0 {
		return 100
	}
	return math.Round(float64(done)/float64(total)*1000) / 10
}

// figures are the run's counts at now; p.mu is held.
func (p *Progress) figures(kind string, now time.Time) ProgressFigures {
	return ProgressFigures{Type: kind, Time: now.UTC(), Campaign: p.campaign, Label: p.label, PercentDone: percent(p.done(), p.total),
		Total: p.total, Sent: p.sent, Failed: p.failed, Unknown: p.unknown, Pending: max(p.total-p.done(), 0),
		PutBack: p.putBack, Retries: p.retries}
}

// statusJSON is the status line at now; p.mu is held.
func (p *Progress) statusJSON(now time.Time) ProgressStatus {
	out := ProgressStatus{ProgressFigures: p.figures("status", now), Waiting: p.waitWhy}
	if r, ok := p.pace(); ok {
		out.Rate = math.Round(r*1000) / 1000
	}
	d, ok, never := p.left()
	if ok {
		sec := d.Seconds()
		out.SecondsRemaining = &sec
	}
	out.Never = never
	return out
}

// summaryJSON is the last line; p.mu is held. Without the database's
// counts (SetStates) it reports the run's own.
func (p *Progress) summaryJSON(now time.Time) ProgressSummary {
	out := ProgressSummary{ProgressFigures: p.figures("summary", now), Counts: map[string]int{}}
	if p.states != nil {
		out.Total = 0
		for state, n := range p.states {
			out.Counts[state] = n
			out.Total += n
		}
		out.Sent, out.Failed, out.Unknown = p.states["sent"], p.states["failed"], p.states["unknown"]
		out.Pending, out.Expired = p.states["pending"], p.states["expired"]
		out.PercentDone = percent(out.Sent+out.Failed+out.Unknown, out.Total)
	}
	return out
}

// writeJSON writes v as one line; p.mu is held. A line that cannot be
// written is lost, as a plain line would be.
func (p *Progress) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = p.w.Write(append(b, '\n'))
}
