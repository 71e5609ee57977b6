package limits

import (
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

func TestNextDay(t *testing.T) {
	tests := []struct {
		cur, today string
		force      bool
		want       string
		changed    bool
		bad        bool
	}{
		{cur: "", today: "2026-03-02", want: "2026-03-02#1", changed: true},
		{cur: "", today: "2026-03-02", force: true, want: "2026-03-02#1", changed: true},
		{cur: "2026-03-02#1", today: "2026-03-02", want: "2026-03-02#1"},
		{cur: "2026-03-02#1", today: "2026-03-02", force: true, want: "2026-03-02#2", changed: true},
		{cur: "2026-03-02#7", today: "2026-03-03", want: "2026-03-03#8", changed: true},
		{cur: "2026-03-03#2", today: "2026-03-02", want: "2026-03-03#2"},
		{cur: "2026-03-03#2", today: "2026-03-02", force: true, want: "2026-03-03#3", changed: true},
		{cur: "2026-03-02", today: "2026-03-03", bad: true},
		{cur: "2026-03-02#0", today: "2026-03-03", bad: true},
		{cur: "2026-03-02#x", today: "2026-03-03", bad: true},
	}
	for _, tt := range tests {
		got, changed, err := NextDay(tt.cur, tt.today, tt.force)
		if tt.bad {
			if err == nil {
				t.Errorf("NextDay(%q) = %q, want an error", tt.cur, got)
			}
			continue
		}
		if err != nil || got != tt.want || changed != tt.changed {
			t.Errorf("NextDay(%q, %q, %v) = %q, %v, %v; want %q, %v", tt.cur, tt.today, tt.force, got, changed, err, tt.want, tt.changed)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"main-01", "fresh 02", "a:b", "número"} {
		if err := ValidName("account", ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a{b", "a}b", "tab\t", "nl\n", string(make([]byte, 201))} {
		if err := ValidName("account", bad); err == nil {
			t.Errorf("ValidName(%q) accepted", bad)
		}
	}
}

func TestRequestValidateRecipientRules(t *testing.T) {
	base := func() Request {
		return Request{ClaimID: "c", Today: "2026-03-02", Accounts: []Account{{Name: "a", Limit: ratelimit.Limit{Rate: 1, Burst: 1}, DailyCap: 1}}}
	}
	tests := []struct {
		name string
		edit func(*Request)
		ok   bool
	}{
		{name: "no recipient, no rules", edit: func(*Request) {}, ok: true},
		{name: "a recipient without rules is remembered", edit: func(r *Request) { r.Recipient = "+15550001" }, ok: true},
		{name: "reach without recipient", edit: func(r *Request) { r.Reach = ratelimit.Reach{Limit: 5} }},
		{name: "no reach (limit 0) without recipient", edit: func(r *Request) { r.Reach = ratelimit.Reach{Margin: 0.1} }, ok: true},
		{name: "pair gap without recipient", edit: func(r *Request) { r.PairGap = time.Minute }},
		{name: "sticky without recipient", edit: func(r *Request) { r.Sticky = time.Hour }},
		{name: "all rules with a recipient", edit: func(r *Request) {
			r.Recipient, r.Reach, r.PairGap, r.Sticky = "+15550001", ratelimit.Reach{Limit: 5, Margin: 0.05}, time.Minute, time.Hour
		}, ok: true},
		{name: "negative pair gap", edit: func(r *Request) { r.Recipient, r.PairGap = "+15550001", -time.Second }},
		{name: "negative sticky", edit: func(r *Request) { r.Recipient, r.Sticky = "+15550001", -time.Second }},
		{name: "margin above one", edit: func(r *Request) { r.Recipient, r.Reach = "+15550001", ratelimit.Reach{Limit: 5, Margin: 1.5} }},
		{name: "margin not a number", edit: func(r *Request) { r.Recipient, r.Reach = "+15550001", ratelimit.Reach{Limit: 5, Margin: math.NaN()} }},
		{name: "tab in the recipient", edit: func(r *Request) { r.Recipient = "+1555\t0001" }},
		{name: "brace in the recipient", edit: func(r *Request) { r.Recipient = "{+15550001}" }},
	}
	for _, tt := range tests {
		r := base()
		tt.edit(&r)
		if err := r.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestReachStateFreesAt(t *testing.T) {
	if got := (ReachState{}).FreesAt(); !got.IsZero() {
		t.Errorf("empty window frees at %v, want zero", got)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	if got := (ReachState{Used: 3, Oldest: at}).FreesAt(); !got.Equal(at.Add(24 * time.Hour)) {
		t.Errorf("frees at %v, want 24 h after the oldest", got)
	}
}
