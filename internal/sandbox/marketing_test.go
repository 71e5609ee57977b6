package sandbox

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMarketingMessages: /marketing_messages takes the same body as
// /messages and is recorded as such; with MarketingSync a template answers
// 131009 there until it has synced, and /messages is unaffected.
func TestMarketingMessages(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s, ts := startServer(t, Options{Now: func() time.Time { return now }, Faults: Faults{MarketingSync: 5 * time.Minute}})
	mm := func(to string) result {
		return do(t, http.MethodPost, ts.URL+"/v26.0/1065/marketing_messages", "Bearer "+token, demo(to))
	}
	if r := mm("+16505550001"); r.status != http.StatusBadRequest || r.graph.Error.Code != 131009 {
		t.Fatalf("first marketing send: status %d code %d; want 400, 131009 while the template syncs", r.status, r.graph.Error.Code)
	}
	if r := post(t, ts, "1065", demo("+16505550002")); r.status != http.StatusOK {
		t.Errorf("/messages while the template syncs to the MM API: status %d, want 200", r.status)
	}
	now = now.Add(5*time.Minute - time.Second)
	if r := mm("+16505550003"); r.graph.Error.Code != 131009 {
		t.Errorf("a second before it synced: code %d, want 131009", r.graph.Error.Code)
	}
	now = now.Add(time.Second)
	if r := mm("+16505550004"); r.status != http.StatusOK {
		t.Fatalf("once synced: status %d (%+v), want 200", r.status, r.graph.Error)
	}
	recs := s.Records()
	if last := recs[len(recs)-1]; !last.Marketing || last.Outcome != OutcomeAccepted {
		t.Errorf("last record %+v: want an accepted marketing send", last)
	}
	if recs[1].Marketing {
		t.Errorf("the /messages send is recorded as marketing: %+v", recs[1])
	}
}

// TestUpgradeWindow: a number in Faults.Upgrade answers 131057 for the
// window from its first request, then sends; other numbers are unaffected.
func TestUpgradeWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	_, ts := startServer(t, Options{Now: func() time.Time { return now }, Faults: Faults{Upgrade: map[string]time.Duration{"1065": time.Minute}}})
	if r := post(t, ts, "1065", demo("+16505550001")); r.graph.Error.Code != 131057 {
		t.Fatalf("first send: code %d, want 131057", r.graph.Error.Code)
	}
	if r := post(t, ts, "2000", demo("+16505550002")); r.status != http.StatusOK {
		t.Errorf("another number: status %d, want 200", r.status)
	}
	now = now.Add(time.Minute)
	if r := post(t, ts, "1065", demo("+16505550003")); r.status != http.StatusOK {
		t.Errorf("after the window: status %d (%+v), want 200", r.status, r.graph.Error)
	}
}

// TestUpgradeWebhook: with webhooks on, a number's first message after its
// upgrade window is followed, after its statuses, by one
// phone_number_quality_update THROUGHPUT_UPGRADE naming its display number.
func TestUpgradeWebhook(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer hook.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s, ts := startServer(t, Options{Now: func() time.Time { return now }, PairInterval: -1,
		Faults:   Faults{Upgrade: map[string]time.Duration{"1065": time.Minute}},
		Webhooks: WebhookOptions{URL: hook.URL, AppSecret: []byte("s")}})
	post(t, ts, "1065", demo("+16505550001")) // 131057: no webhook
	now = now.Add(time.Minute)
	post(t, ts, "1065", demo("+16505550002"))
	post(t, ts, "1065", demo("+16505550003"))
	if n := s.FlushWebhooks(); n != 0 {
		t.Fatalf("%d webhooks not answered", n)
	}
	mu.Lock()
	defer mu.Unlock()
	upgrades, lastStatus, upgradeAt := 0, -1, -1
	for i, b := range bodies {
		switch {
		case strings.Contains(b, `"THROUGHPUT_UPGRADE"`):
			upgrades++
			upgradeAt = i
			if !strings.Contains(b, `"display_phone_number":"15551065"`) || !strings.Contains(b, `"phone_number_quality_update"`) {
				t.Errorf("upgrade body %s", b)
			}
		case strings.Contains(b, `"statuses"`) && upgradeAt < 0:
			lastStatus = i
		}
	}
	if upgrades != 1 || lastStatus < 0 || upgradeAt < lastStatus {
		t.Errorf("%d upgrade webhooks (at %d, a status at %d) in %d bodies; want one, after a status naming the number", upgrades, upgradeAt, lastStatus, len(bodies))
	}
}

// TestMarketingMessagesRefusesOtherTemplates: /marketing_messages answers
// 131055 for a template that is not a marketing one, as Meta does.
func TestMarketingMessagesRefusesOtherTemplates(t *testing.T) {
	_, ts := startServer(t, Options{})
	r := do(t, http.MethodPost, ts.URL+"/v26.0/1065/marketing_messages", "Bearer "+token, templateJSON("+16505550001", "order_ready", "Ana"))
	if r.status != http.StatusBadRequest || r.graph.Error.Code != 131055 {
		t.Errorf("a utility template on marketing_messages: status %d code %d; want 400, 131055", r.status, r.graph.Error.Code)
	}
	if r := do(t, http.MethodPost, ts.URL+"/v26.0/1065/marketing_messages", "Bearer "+token, demo("+16505550002")); r.status != http.StatusOK {
		t.Errorf("a marketing template: status %d (%+v), want 200", r.status, r.graph.Error)
	}
}

// TestHeldShare: with Faults.Held every accepted template send is answered
// message_status held_for_quality_assessment and recorded held; a text is
// never held (template pacing paces templates). Without it, accepted.
func TestHeldShare(t *testing.T) {
	s, ts := startServer(t, Options{PairInterval: -1, Faults: Faults{Held: 1}})
	r := post(t, ts, "1065", demo("+16505550001"))
	if r.status != http.StatusOK || len(r.ok.Messages) != 1 || r.ok.Messages[0].MessageStatus != "held_for_quality_assessment" {
		t.Fatalf("held send: status %d, %+v; want 200 held_for_quality_assessment", r.status, r.ok.Messages)
	}
	if rec := s.Records()[0]; !rec.Held {
		t.Errorf("record %+v: want held", rec)
	}
	_, plain := startServer(t, Options{})
	if r := post(t, plain, "1065", demo("+16505550002")); r.ok.Messages[0].MessageStatus != "accepted" {
		t.Errorf("without held share: %q, want accepted", r.ok.Messages[0].MessageStatus)
	}
	if err := (Options{Faults: Faults{Held: 1.5}}).Validate(); err == nil {
		t.Error("held share 1.5 accepted, want a refusal")
	}
}
