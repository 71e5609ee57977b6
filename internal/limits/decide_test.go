package limits

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// TestDecide walks Decide's order: each case sets up the rule under test
// and, where it matters, a later rule that would refuse too, so the first
// rule in the written order must be the one that answers.
func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	lim := ratelimit.Limit{Rate: 1, Burst: 2}
	full := Balance{Bucket: ratelimit.Full(lim, t0), Window: 0}
	empty := Balance{Bucket: ratelimit.Bucket{At: t0}, Window: 0}
	accts := []Account{{Name: "a", Limit: lim, DailyCap: 10}, {Name: "b", Limit: lim, DailyCap: 10}}
	reach := ratelimit.Reach{Limit: 1}
	fullWindow := Window{Reach: reach, Used: 1, Oldest: t0.Add(-time.Hour)}
	base := Request{Accounts: accts, Recipient: "+1", Guard: "t:x", Host: "h1", PairGap: time.Minute, Sticky: time.Hour}
	tests := []struct {
		name       string
		s          Snapshot
		wantOK     bool
		wantIndex  int
		wantReason ratelimit.Reason
		wantUntil  time.Time
		wantSticky string
		wantOffer  bool
		wantNew    bool
	}{
		{name: "guard before the pair gap",
			s: Snapshot{Hold: GuardHold{Host: "h2", Until: t0.Add(time.Hour)}, Last: Contact{At: t0.Add(-time.Second)},
				Windows: []Window{{}}, Accounts: []Balance{full, full}},
			wantReason: ReasonElsewhere, wantUntil: t0.Add(time.Hour)},
		{name: "own host's guard refuses nothing",
			s:      Snapshot{Hold: GuardHold{Host: "h1", Until: t0.Add(time.Hour)}, Windows: []Window{{}}, Accounts: []Balance{full, full}},
			wantOK: true},
		{name: "pair gap before the reach",
			s:          Snapshot{Last: Contact{At: t0.Add(-10 * time.Second)}, Windows: []Window{fullWindow}, Accounts: []Balance{full, full}},
			wantReason: ReasonPair, wantUntil: t0.Add(50 * time.Second)},
		{name: "reach before the tokens",
			s:          Snapshot{Windows: []Window{fullWindow}, Accounts: []Balance{empty, empty}},
			wantReason: ReasonReach, wantUntil: t0.Add(23 * time.Hour)},
		{name: "an empty window the margin leaves nothing of",
			s:          Snapshot{Windows: []Window{{Reach: ratelimit.Reach{Limit: 1, Margin: 1}}}, Accounts: []Balance{full, full}},
			wantReason: ReasonReach, wantUntil: t0.Add(24 * time.Hour)},
		{name: "a recipient in the full window costs nothing",
			s:      Snapshot{Windows: []Window{{Reach: reach, Used: 1, Oldest: t0.Add(-time.Hour), Last: t0.Add(-time.Hour)}}, Accounts: []Balance{full, full}},
			wantOK: true},
		{name: "a new recipient counts",
			s:      Snapshot{Windows: []Window{{Reach: reach}}, Accounts: []Balance{full, full}},
			wantOK: true, wantNew: true},
		{name: "the other portfolio's window takes them",
			s:      Snapshot{Windows: []Window{fullWindow, {Reach: reach}}, Accounts: []Balance{full, {Bucket: full.Bucket, Window: 1}}},
			wantOK: true, wantIndex: 1, wantNew: true},
		{name: "sticky: only their number, which waits for a token",
			s: Snapshot{Sender: Contact{At: t0.Add(-time.Minute), Account: "b"}, Windows: []Window{{}},
				Accounts: []Balance{full, empty}},
			wantReason: ratelimit.ReasonTokens, wantUntil: t0.Add(time.Second), wantSticky: "b", wantOffer: true},
		{name: "sticky: their number's window is full",
			s: Snapshot{Sender: Contact{At: t0.Add(-time.Minute), Account: "b"}, Windows: []Window{{Reach: reach}, fullWindow},
				Accounts: []Balance{full, {Bucket: full.Bucket, Window: 1}}},
			wantReason: ReasonReach, wantUntil: t0.Add(23 * time.Hour), wantSticky: "b", wantOffer: true},
		{name: "sticky number not offered: any may",
			s:      Snapshot{Sender: Contact{At: t0.Add(-time.Minute), Account: "c"}, Windows: []Window{{}}, Accounts: []Balance{full, full}},
			wantOK: true, wantSticky: "c"},
		{name: "stickiness over",
			s:      Snapshot{Sender: Contact{At: t0.Add(-2 * time.Hour), Account: "b"}, Windows: []Window{{}}, Accounts: []Balance{full, empty}},
			wantOK: true},
		{name: "a cooldown waits",
			s: Snapshot{Windows: []Window{{}}, Accounts: []Balance{{Bucket: full.Bucket, NotBefore: t0.Add(time.Minute)},
				{Bucket: full.Bucket, NotBefore: t0.Add(2 * time.Minute)}}},
			wantReason: ratelimit.ReasonTokens, wantUntil: t0.Add(time.Minute)},
		{name: "global last",
			s: Snapshot{Windows: []Window{{}}, Accounts: []Balance{full, full}, Global: &ratelimit.Bucket{At: t0},
				GlobalLimit: ratelimit.Limit{Rate: 0.5, Burst: 1}},
			wantReason: ratelimit.ReasonGlobal, wantUntil: t0.Add(2 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.s, base, t0)
			if d.OK != tt.wantOK || d.Reason != tt.wantReason || !d.Until.Equal(tt.wantUntil) ||
				d.Sticky != tt.wantSticky || d.Offered != tt.wantOffer || d.New != tt.wantNew || (d.OK && d.Index != tt.wantIndex) {
				t.Fatalf("Decide = %+v", d)
			}
			if d.OK && d.Bucket.Tokens != tt.s.Accounts[d.Index].Bucket.Tokens-1 {
				t.Errorf("tokens left %v, want one taken", d.Bucket.Tokens)
			}
		})
	}
}
