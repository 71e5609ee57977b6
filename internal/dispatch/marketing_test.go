package dispatch_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestEndpointChoice: under --api auto a marketing template goes through
// /marketing_messages from a number whose WABA is onboarded and through
// /messages from one that is not; any other category, and --api cloud,
// always through /messages.
func TestEndpointChoice(t *testing.T) {
	tests := []struct {
		name     string
		endpoint dispatch.Endpoint
		want     map[string]bool // phone number id → sends went to marketing_messages
	}{
		{"auto, marketing", dispatch.Endpoint{API: campaign.APIAuto, Category: "MARKETING"}, map[string]bool{"1001": true, "2002": false}},
		{"auto, utility", dispatch.Endpoint{API: campaign.APIAuto, Category: "UTILITY"}, map[string]bool{"1001": false, "2002": false}},
		{"cloud, marketing", dispatch.Endpoint{API: campaign.APICloud, Category: "MARKETING"}, map[string]bool{"1001": false, "2002": false}},
		{"marketing", dispatch.Endpoint{API: campaign.APIMarketing, Category: "MARKETING"}, map[string]bool{"1001": true, "2002": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
			e.addAccount("a", "1001", campaign.TierActive)
			e.addAccount("b", "2002", campaign.TierActive)
			c := e.importN(20)
			tt.endpoint.Onboarded = func(a campaign.Account) bool { return a.PhoneNumberID == "1001" }
			eng := e.engine(c, dispatch.Options{Endpoint: tt.endpoint, Policy: dispatch.Policy{Workers: 2, MaxAttempts: 3}})
			if err := eng.Run(e.ctx); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, r := range e.box.Records() {
				seen[r.PhoneNumberID]++
				if r.Marketing != tt.want[r.PhoneNumberID] {
					t.Errorf("send from %s: marketing_messages %v, want %v", r.PhoneNumberID, r.Marketing, tt.want[r.PhoneNumberID])
				}
			}
			if seen["1001"] == 0 || seen["2002"] == 0 {
				t.Fatalf("sends per number %v: both numbers must send for the test to prove anything", seen)
			}
		})
	}
}

// TestTemplateSyncWait: the Marketing Messages API answers 131009 while
// the template syncs; the rows wait and go once it has, every one sent
// and none spending a retry.
func TestTemplateSyncWait(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{MarketingSync: 3 * time.Minute})
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(10)
	eng := e.engine(c, dispatch.Options{Endpoint: dispatch.Endpoint{API: campaign.APIMarketing, Category: "MARKETING"},
		Policy: dispatch.Policy{Workers: 2, MaxAttempts: 2}})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	for phone, r := range e.rows() {
		if r.state != campaign.Sent || r.retries != 0 {
			t.Errorf("row %s %+v: want sent with no retry spent", phone, r)
		}
	}
	if n := e.attemptClasses()["template-syncing"]; n == 0 {
		t.Error("no attempt was answered 131009: the test proves nothing")
	}
	if got := e.clock.Now().Sub(start); got < 3*time.Minute {
		t.Errorf("the run ended %v after its start, before the template synced", got)
	}
	if got := e.usedToday("a"); got != 10 {
		t.Errorf("used today %d, want 10: the waits are refunded", got)
	}
}

// TestUpgradeRestsTheNumber: 131057 (a throughput upgrade) rests the number
// a minute and the rows go again after it, costing no attempt.
func TestUpgradeRestsTheNumber(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{Upgrade: map[string]time.Duration{"1001": 30 * time.Second}})
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(10)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2, MaxAttempts: 2}})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	for phone, r := range e.rows() {
		if r.state != campaign.Sent || r.retries != 0 {
			t.Errorf("row %s %+v: want sent with no retry spent", phone, r)
		}
	}
	upgrading := 0
	var firstOK time.Time
	for _, r := range e.box.Records() {
		switch {
		case r.Code == 131057:
			upgrading++
		case r.Outcome == sandbox.OutcomeAccepted && firstOK.IsZero():
			firstOK = r.At
		}
	}
	if upgrading == 0 || e.attemptClasses()["number-upgrading"] != upgrading {
		t.Errorf("%d answers 131057, attempts classed %v", upgrading, e.attemptClasses())
	}
	if got := firstOK.Sub(start); got < dispatch.UpgradePause {
		t.Errorf("first send accepted %v after the 131057, want the number to rest %v", got, dispatch.UpgradePause)
	}
}
