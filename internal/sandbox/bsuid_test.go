package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A business-scoped user id goes in recipient. In to, Meta answers 200
// with a message id and never delivers it; the sandbox does the same, so
// that a test of wasend can see the mistake in its record.
func TestUserIDRecipients(t *testing.T) {
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
	s, ts := startServer(t, Options{Throughput: -1, PairInterval: -1,
		Webhooks: WebhookOptions{URL: hook.URL, AppSecret: []byte("x"), Seed: 1}})
	const user = "US.13491208655302741918"
	inRecipient := strings.Replace(demo("+1"), `"to":"+1"`, `"recipient":"`+user+`"`, 1)
	inTo := demo("GB.77")

	r := post(t, ts, "1065", inRecipient)
	if r.status != 200 || len(r.ok.Messages) != 1 {
		t.Fatalf("recipient: %d %+v %v", r.status, r.ok, r.graph)
	}
	r = post(t, ts, "1065", inTo)
	if r.status != 200 || len(r.ok.Messages) != 1 || !strings.HasPrefix(r.ok.Messages[0].ID, "wamid.") {
		t.Fatalf("user id in to: %d %+v, want 200 with a message id as Meta answers", r.status, r.ok)
	}
	for _, bad := range []string{
		strings.Replace(demo("+1"), `"to":"+1"`, `"recipient":"us.1"`, 1),
		strings.Replace(demo("+1"), `"to":"+1"`, `"recipient":"+16505551234"`, 1),
	} {
		if r := post(t, ts, "1065", bad); r.status != 400 {
			t.Errorf("%s: %d, want 400", bad, r.status)
		}
	}
	s.FlushWebhooks()

	recs := s.Records()
	if recs[0].Recipient != user || recs[0].Outcome != OutcomeAccepted || recs[1].To != "GB.77" || recs[1].Outcome != OutcomeIgnored {
		t.Errorf("records %+v", recs[:2])
	}
	if acc := s.Accepted(); acc[user] != 1 || acc["GB.77"] != 0 || len(acc) != 1 {
		t.Errorf("accepted %v: want the recipient send only", acc)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("no status webhook for the recipient send")
	}
	for _, b := range bodies {
		if strings.Contains(b, "GB.77") {
			t.Errorf("a webhook for the user id sent in to: %s", b)
		}
		var p struct {
			Entry []struct {
				Changes []struct {
					Value struct {
						Statuses []map[string]any `json:"statuses"`
					} `json:"value"`
				} `json:"changes"`
			} `json:"entry"`
		}
		if err := json.Unmarshal([]byte(b), &p); err != nil {
			t.Fatal(err)
		}
		for _, st := range p.Entry[0].Changes[0].Value.Statuses {
			if st["recipient_user_id"] != user || st["recipient_id"] != nil {
				t.Errorf("status %v: want recipient_user_id %s and no recipient_id", st, user)
			}
		}
	}
}

// Statuses of a send to a number carry the person's user id too, as
// Meta's have since April 2026.
func TestStatusesCarryUserIDs(t *testing.T) {
	st := map[string]any{}
	recipientFields(st, "16505551234")
	if st["recipient_id"] != "16505551234" || st["recipient_user_id"] != "ZZ.16505551234" {
		t.Errorf("fields %v", st)
	}
	msg := map[string]any{}
	c := sender(msg, "US.1")
	if msg["from"] != nil || msg["from_user_id"] != "US.1" || c["user_id"] != "US.1" || c["wa_id"] != nil {
		t.Errorf("a user id's answer: %v %v", msg, c)
	}
}
