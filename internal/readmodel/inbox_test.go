package readmodel_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/webhook"
)

// TestWebhookBacklog: the inbox's backlog counts the bodies not applied,
// dates the oldest of them and the latest of all; once drained nothing
// waits and the lag is 0, the latest body still dated.
func TestWebhookBacklog(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		clk := newFakeClock()
		st := be.open(t, clk)
		r := readmodel.New(st)
		read := func() readmodel.InboxBacklog {
			t.Helper()
			b, err := r.WebhookBacklog(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if b := read(); b != (readmodel.InboxBacklog{}) || b.Lag(at(time.Hour)) != 0 {
			t.Errorf("empty inbox: %+v, want nothing", b)
		}
		for _, d := range []time.Duration{0, 0, 10 * time.Second} {
			clk.Set(at(d))
			if err := st.AddToInbox(t.Context(), [][]byte{[]byte(`{"object":"whatsapp_business_account","entry":[]}`)}); err != nil {
				t.Fatal(err)
			}
		}
		b := read()
		if b.Waiting != 3 || !b.OldestWaited.Equal(at(0)) || !b.LatestAt.Equal(at(10*time.Second)) {
			t.Errorf("3 bodies stored: %+v, want 3 waiting, the oldest at t0, the latest at t0+10s", b)
		}
		if got := b.Lag(at(30 * time.Second)); got != 30*time.Second {
			t.Errorf("lag at t0+30s: %v, want 30s", got)
		}
		clk.Set(at(time.Minute))
		if _, err := webhook.Drain(t.Context(), st, 10, webhook.NewRules(webhook.Policy{})); err != nil {
			t.Fatal(err)
		}
		b = read()
		if b.Waiting != 0 || b.Lag(at(2*time.Minute)) != 0 || !b.LatestAt.Equal(at(10*time.Second)) {
			t.Errorf("drained: %+v, want none waiting, lag 0, the latest body still at t0+10s", b)
		}
	})
}
