package sandbox

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

func textJSON(to string) string {
	return `{"messaging_product":"whatsapp","recipient_type":"individual","to":"` + to + `","type":"text","text":{"body":"hello"}}`
}

// TestServiceWindowPerNumber: like Meta, the sandbox keeps the customer
// service window per (business number, person), in one record read by
// the 131047 refusal and the free service pricing alike: a person who
// wrote to number 1065 (before the sandbox started, told by a test, or
// answering the sandbox's own message) gets free-form text from 1065 only,
// and a utility template from 1065 is free; from 1066 a text is refused
// and the template is regular. Templates are never refused; a window
// closes 24 h after the message that opened it, and an answer opens one
// only once it is dated.
func TestServiceWindowPerNumber(t *testing.T) {
	clk := newFakeClock()
	t0 := clk.Now()
	type step struct {
		from, body string
		wantCode   int // 0: accepted
		wantWhy    string
	}
	run := func(ts *httptest.Server, name string, steps []step) {
		t.Helper()
		for _, st := range steps {
			r := post(t, ts, st.from, st.body)
			switch {
			case st.wantCode == 0 && r.status != 200:
				t.Errorf("%s: %s from %s: %d %+v, want accepted", name, st.body, st.from, r.status, r.graph)
			case st.wantCode != 0 && (r.graph.Error.Code != st.wantCode || !strings.Contains(r.graph.Error.ErrorData.Details, st.wantWhy)):
				t.Errorf("%s: %s from %s: %d %+v, want %d (%s)", name, st.body, st.from, r.status, r.graph, st.wantCode, st.wantWhy)
			}
		}
	}

	// Windows opened before the start and told of.
	s, ts := startServer(t, Options{Now: clk.Now, Throughput: -1, PairInterval: -1, ServiceWindow: true,
		Wrote: map[string]campaign.Wrote{"+4915100000001": {"1065": t0.Add(-time.Hour)}}})
	s.NoteInbound("4915100000002", "1066", t0.Add(-23*time.Hour))
	run(ts, "at the start", []step{
		{from: "1065", body: textJSON("+4915100000001")},
		{from: "1066", body: textJSON("+4915100000001"), wantCode: 131047, wantWhy: "never wrote to this number"},
		{from: "1066", body: textJSON("+4915100000002")},
		{from: "1065", body: textJSON("+4915100000002"), wantCode: 131047, wantWhy: "never wrote to this number"},
		{from: "1065", body: textJSON("+4915100000003"), wantCode: 131047},
		{from: "1066", body: demo("+4915100000003")}, // a template: no window needed
	})
	clk.Set(t0.Add(2 * time.Hour))
	run(ts, "two hours on", []step{
		{from: "1066", body: textJSON("+4915100000002"), wantCode: 131047, wantWhy: "last wrote to this number " + t0.Add(-23*time.Hour).UTC().Format(time.RFC3339)},
		{from: "1065", body: textJSON("+4915100000001")},
	})

	// A window opened by the sandbox's own answer, dated 45 s after the
	// message it answers.
	clk.Set(t0)
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	s, ts = startServer(t, Options{Now: clk.Now, Throughput: -1, PairInterval: -1, ServiceWindow: true,
		Webhooks: WebhookOptions{URL: hook.URL, AppSecret: []byte("x"), Seed: 1, Reply: 1}})
	run(ts, "before the answer", []step{
		{from: "1065", body: demo("+4915100000003")},
		{from: "1065", body: textJSON("+4915100000003"), wantCode: 131047},
	})
	clk.Set(t0.Add(time.Minute))
	run(ts, "after it", []step{
		{from: "1065", body: textJSON("+4915100000003")},
		{from: "1066", body: textJSON("+4915100000003"), wantCode: 131047},
	})
	tmpl := map[string]string{}
	for _, from := range []string{"1065", "1066"} {
		r := post(t, ts, from, templateJSON("+4915100000003", "order_ready"))
		if r.status != 200 {
			t.Fatalf("utility template from %s: %d", from, r.status)
		}
		tmpl[from] = r.ok.Messages[0].ID
	}
	s.FlushWebhooks()
	d := s.Deliveries()
	if d[tmpl["1065"]].PricingType != "free_customer_service" || d[tmpl["1066"]].PricingType != "regular" {
		t.Errorf("utility templates priced %q from 1065 (window open) and %q from 1066; want free_customer_service and regular",
			d[tmpl["1065"]].PricingType, d[tmpl["1066"]].PricingType)
	}
}
