package webhook

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

func permutations(xs []status) [][]status {
	if len(xs) <= 1 {
		return [][]status{append([]status(nil), xs...)}
	}
	var out [][]status
	for i := range xs {
		rest := append(append([]status(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]status{xs[i]}, p...))
		}
	}
	return out
}

// Whatever order statuses arrive in, one body or one each, duplicated or
// not, before or after wasend recorded the send: the row ends the same.
func TestDeliveryEndsTheSameInAnyOrder(t *testing.T) {
	sts := []status{
		{status: "sent", at: 1 * time.Second},
		{status: "delivered", at: 5 * time.Second},
		{status: "read", at: 60 * time.Second},
	}
	want := func(t *testing.T, f *fixture) {
		t.Helper()
		d := f.msg(t, 0)
		if d.State != campaign.Sent || d.Delivery != campaign.DeliveryRead || d.WAMID != wamid(0) {
			t.Fatalf("row = %+v, want sent/read with %s", d, wamid(0))
		}
		if !d.DeliveredAt.Equal(t0.Add(5*time.Second)) || !d.ReadAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("delivered at %v, read at %v; want the webhooks' own timestamps", d.DeliveredAt, d.ReadAt)
		}
	}
	for _, perm := range permutations(sts) {
		name := perm[0].status + "," + perm[1].status + "," + perm[2].status
		t.Run(name+"/recorded-first", func(t *testing.T) {
			f := newFixture(t, 1, Policy{})
			f.sent(t, 0)
			for _, s := range perm {
				f.deliver(t, f.body(s))
			}
			rep := f.deliver(t, f.body(perm...)) // Meta retrying the lot
			if rep.Duplicates != 3 {
				t.Errorf("resent statuses: %d duplicates, want 3", rep.Duplicates)
			}
			want(t, f)
		})
		t.Run(name+"/before-the-answer", func(t *testing.T) {
			f := newFixture(t, 1, Policy{})
			rep := f.deliver(t, f.body(perm...))
			if rep.Deferred != 3 {
				t.Errorf("deferred %d, want 3 while the row is in flight", rep.Deferred)
			}
			if d := f.msg(t, 0); d.State != campaign.Sending || d.Delivery != "" {
				t.Fatalf("in-flight row changed: %+v", d)
			}
			f.sent(t, 0)
			f.deliver(t)
			want(t, f)
		})
	}
}

// A read with no delivered before it (Meta sends none when both happen at
// once) still counts as delivered, at the read's time.
func TestReadImpliesDelivered(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	f.sent(t, 0)
	f.deliver(t, f.body(status{status: "read", at: 9 * time.Second}))
	f.deliver(t, f.body(status{status: "sent", at: 2 * time.Second}))
	d := f.msg(t, 0)
	if d.Delivery != campaign.DeliveryRead || !d.DeliveredAt.Equal(t0.Add(9*time.Second)) {
		t.Fatalf("row = %+v, want read and delivered at the read's time", d)
	}
	fig, err := readmodel.New(f.st).CampaignDelivery(t.Context(), f.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Sent != 1 || fig.Delivered != 1 || fig.Read != 1 || fig.DeliveredRate() != 1 || fig.ReadRate() != 1 {
		t.Errorf("figures = %+v", fig)
	}
}

// An unknown row (the answer was lost) becomes sent with the webhook's
// wamid as proof, matched by biz_opaque_callback_data; a failed one fails
// with the code and title.
func TestUnknownRowsSettledByCallbackData(t *testing.T) {
	f := newFixture(t, 3, Policy{})
	for i := range 3 {
		f.record(t, i, campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "connection reset", Class: "ambiguous"})
	}
	rep := f.deliver(t,
		f.body(status{row: 0, status: "delivered", at: 3 * time.Second}),
		f.body(status{row: 1, status: "failed", at: 3 * time.Second, code: 131026, title: "Message Undeliverable."}))
	if rep.Adopted != 2 {
		t.Errorf("adopted %d, want 2", rep.Adopted)
	}
	if d := f.msg(t, 0); d.State != campaign.Sent || d.WAMID != wamid(0) || d.Delivery != campaign.DeliveryDelivered {
		t.Errorf("row 0 = %+v, want sent and delivered with its wamid", d)
	}
	d := f.msg(t, 1)
	if d.State != campaign.Failed || d.ErrorCode != 131026 || !d.FailedAfter || !strings.Contains(d.Error, "Message Undeliverable") {
		t.Errorf("row 1 = %+v, want failed after send with 131026 and its title", d)
	}
	if d := f.msg(t, 2); d.State != campaign.Unknown {
		t.Errorf("row 2 without a webhook = %+v, want still unknown", d)
	}
	f.clk.Set(t0.Add(2 * time.Hour))
	if n, err := readmodel.New(f.st).StaleUnknown(t.Context(), f.c.ID, time.Hour); err != nil || n != 1 {
		t.Errorf("StaleUnknown = %d, %v; want 1", n, err)
	}
}

// Asynchronous failures go through the classifier of synchronous answers.
func TestAsyncFailures(t *testing.T) {
	tests := []struct {
		name      string
		policy    Policy
		code      int
		wantState campaign.State
		wantPause bool
		wantSupp  bool
	}{
		{name: "131049 rescheduled a day later", code: 131049, wantState: campaign.Pending},
		{name: "131049 failed with --no-reschedule", policy: Policy{NoReschedule: true}, code: 131049, wantState: campaign.Failed},
		{name: "131050 suppressed", code: 131050, wantState: campaign.Failed, wantSupp: true},
		{name: "131026 failed", code: 131026, wantState: campaign.Failed},
		{name: "unlisted code failed", code: 135000, wantState: campaign.Failed},
		{name: "template paused: campaign paused, row requeued", code: 132015, wantState: campaign.Pending, wantPause: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 1, tt.policy)
			f.sent(t, 0)
			now := t0.Add(10 * time.Minute)
			f.clk.Set(now)
			f.deliver(t, f.body(status{status: "sent", at: time.Second}))
			rep := f.deliver(t, f.body(status{status: "failed", at: 2 * time.Second, code: tt.code, title: "Title of " + "the error"}))
			d := f.msg(t, 0)
			if d.State != tt.wantState || d.ErrorCode != tt.code || !strings.Contains(d.Error, "Title of the error") {
				t.Fatalf("row = %+v, want %s with code %d and its title", d, tt.wantState, tt.code)
			}
			if tt.code == 131049 && tt.wantState == campaign.Pending {
				if d.NextAttemptAt.Before(now.Add(24*time.Hour)) || rep.Rescheduled != 1 {
					t.Errorf("next attempt %v (rescheduled %d), want no sooner than %v", d.NextAttemptAt, rep.Rescheduled, now.Add(24*time.Hour))
				}
				if d.WAMID != "" || d.Delivery != "" {
					t.Errorf("rescheduled row keeps wamid %q, delivery %q", d.WAMID, d.Delivery)
				}
			}
			if tt.wantState == campaign.Failed && (d.Delivery != campaign.DeliveryFailed || !d.FailedAfter) {
				t.Errorf("failed row: delivery %q, failed after send %v", d.Delivery, d.FailedAfter)
			}
			supp, err := isSuppressed(t, f.st, phone(0))
			if err != nil || supp != tt.wantSupp {
				t.Errorf("suppressed = %v, %v; want %v", supp, err, tt.wantSupp)
			}
			// An opt-out waits to be put on the list other hosts share.
			if push, err := f.st.ToPush(t.Context(), 10); err != nil || (len(push) == 1 && !push[0].IfUnknown && push[0].Phone == phone(0)) != tt.wantSupp {
				t.Errorf("to push = %+v, %v; want the opt-out (whatever the shared list knew): %v", push, err, tt.wantSupp)
			}
			c, err := f.st.Campaign(t.Context(), f.c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if (c.State == campaign.CampaignPaused) != tt.wantPause {
				t.Errorf("campaign state %s (%s), want paused %v", c.State, c.PauseReason, tt.wantPause)
			}
			// Failed is final: a late delivered for the same wamid changes
			// nothing. A row put back to pending is the person's message
			// after all: adopted again, never sent twice.
			f.deliver(t, f.body(status{status: "delivered", at: time.Second}))
			again := f.msg(t, 0)
			switch {
			case tt.wantState == campaign.Failed && again != d:
				t.Errorf("a late delivered changed the row:\n%+v\n%+v", d, again)
			case tt.wantState == campaign.Pending && (again.State != campaign.Sent || again.Delivery != campaign.DeliveryDelivered):
				t.Errorf("a late delivered left the requeued row to be sent again: %+v", again)
			}
		})
	}
}

// Statuses for messages wasend never sent are counted and ignored: no
// callback data and an unknown wamid, or callback data of another
// database whose row here has another recipient.
func TestStatusesOfOtherMessagesIgnored(t *testing.T) {
	f := newFixture(t, 2, Policy{})
	f.sent(t, 0)
	f.record(t, 1, campaign.Outcome{Kind: campaign.OutcomeUnknown, Class: "ambiguous"})
	foreign := f.body(status{row: 1, status: "delivered", wamid: "wamid.someone-else", noCB: true})
	other := []byte(strings.Replace(string(f.body(status{row: 1, status: "read", wamid: "wamid.other-db"})),
		phone(1)[1:], "4915100000000", 1))
	rep := f.deliver(t, foreign, other)
	if rep.Unmatched != 2 || rep.Adopted != 0 {
		t.Errorf("report %+v, want 2 unmatched, none adopted", rep)
	}
	if d := f.msg(t, 1); d.State != campaign.Unknown {
		t.Errorf("row 1 = %+v, want unknown still", d)
	}
}

func TestTemplateAndQualityEvents(t *testing.T) {
	f := newFixture(t, 1, Policy{Restriction: 3 * time.Hour})
	f.sent(t, 0)
	tmpl, err := os.ReadFile("testdata/template_status_update.json")
	if err != nil {
		t.Fatal(err)
	}
	rep := f.deliver(t, tmpl)
	if rep.Paused != 1 {
		t.Errorf("paused %d campaigns, want 1", rep.Paused)
	}
	c, _ := f.st.Campaign(t.Context(), f.c.ID)
	if c.State != campaign.CampaignPaused || !strings.Contains(c.PauseReason, "spring_sale is PAUSED") {
		t.Errorf("campaign %s (%q), want paused naming the template", c.State, c.PauseReason)
	}

	quality, err := os.ReadFile("testdata/phone_number_quality_update.json")
	if err != nil {
		t.Fatal(err)
	}
	// The quality update names the display number only; a status webhook
	// has shown which phone number id that is.
	f.deliver(t, f.body(status{status: "sent", at: time.Second}))
	if rep := f.deliver(t, quality); rep.Stopped != 1 {
		t.Fatalf("stopped %d accounts, want 1", rep.Stopped)
	}
	a, err := f.st.Account(t.Context(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if !a.CooldownUntil.Equal(t0.Add(3*time.Hour)) || !strings.Contains(a.Restriction, "FLAGGED") {
		t.Errorf("account until %v (%q), want stopped 3 h for FLAGGED", a.CooldownUntil, a.Restriction)
	}
}

// A body that is JSON but no notification is kept and skipped, and does
// not hold up the bodies after it.
func TestMalformedBodySkipped(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	f.sent(t, 0)
	rep := f.deliver(t, []byte(`{"object":"page"}`), f.body(status{status: "delivered", at: time.Second}))
	if rep.Malformed != 1 || rep.Bodies != 2 || f.msg(t, 0).Delivery != campaign.DeliveryDelivered {
		t.Errorf("report %+v, row %+v", rep, f.msg(t, 0))
	}
}
