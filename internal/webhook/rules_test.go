package webhook

import (
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestSettle walks what a status does to the row it matched, from every
// kind of row: the store carries out exactly the action decided here.
func TestSettle(t *testing.T) {
	now := t0.Add(time.Hour)
	const w = "wamid.1"
	sent := campaign.StatusRow{State: campaign.Sent, WAMID: w, Delivery: campaign.DeliverySent, CampaignID: 7, AccountID: 3}
	with := func(r campaign.StatusRow, f func(*campaign.StatusRow)) campaign.StatusRow { f(&r); return r }
	status := func(d campaign.Delivery) campaign.StatusEvent {
		return campaign.StatusEvent{WAMID: w, Status: d, At: t0}
	}
	failed := func(code int) campaign.StatusEvent {
		ev := status(campaign.DeliveryFailed)
		ev.ErrorCode, ev.ErrorTitle = code, "Title"
		return ev
	}
	errText := func(code int) string { return fmt.Sprintf("error %d after send: Title", code) }
	const notAgainCancelled = "; " + refusedCancelled
	tests := []struct {
		name   string
		policy Policy
		row    campaign.StatusRow
		ev     campaign.StatusEvent
		want   campaign.StatusAction
	}{
		{name: "delivered for the row's wamid advances", row: sent, ev: status(campaign.DeliveryDelivered),
			want: campaign.StatusAction{Move: campaign.StatusAdvance}},
		{name: "read for the row's wamid advances", row: sent, ev: status(campaign.DeliveryRead),
			want: campaign.StatusAction{Move: campaign.StatusAdvance}},
		{name: "a row in flight waits", row: campaign.StatusRow{State: campaign.Sending, CampaignID: 7}, ev: status(campaign.DeliveryDelivered),
			want: campaign.StatusAction{Move: campaign.StatusWait}},
		{name: "a failure for a row in flight waits too", row: campaign.StatusRow{State: campaign.Sending}, ev: failed(131050),
			want: campaign.StatusAction{Move: campaign.StatusWait}},
		{name: "unknown row adopted, then advanced", row: campaign.StatusRow{State: campaign.Unknown, CampaignID: 7}, ev: status(campaign.DeliverySent),
			want: campaign.StatusAction{Adopt: true, Move: campaign.StatusAdvance}},
		{name: "requeued row adopted", row: campaign.StatusRow{State: campaign.Pending, CampaignID: 7}, ev: status(campaign.DeliveryDelivered),
			want: campaign.StatusAction{Adopt: true, Move: campaign.StatusAdvance}},
		{name: "a sent for a wamid that failed adopts nothing", row: campaign.StatusRow{State: campaign.Pending, WAMIDFailed: true},
			ev: status(campaign.DeliverySent), want: campaign.StatusAction{}},
		{name: "a delivered for a wamid that failed still adopts", row: campaign.StatusRow{State: campaign.Pending, WAMIDFailed: true},
			ev: status(campaign.DeliveryDelivered), want: campaign.StatusAction{Adopt: true, Move: campaign.StatusAdvance}},
		{name: "the failure itself is no reason not to adopt", row: campaign.StatusRow{State: campaign.Unknown, CampaignID: 7, WAMIDFailed: true},
			ev: failed(131026), want: campaign.StatusAction{Adopt: true, Move: campaign.StatusFail, Error: errText(131026)}},
		{name: "another attempt's late status is kept", row: with(sent, func(r *campaign.StatusRow) { r.WAMID = "wamid.2" }),
			ev: status(campaign.DeliveryRead), want: campaign.StatusAction{}},
		{name: "a failed row is not adopted", row: campaign.StatusRow{State: campaign.Failed}, ev: status(campaign.DeliveryDelivered),
			want: campaign.StatusAction{}},
		{name: "a pending row with another wamid is not adopted", row: campaign.StatusRow{State: campaign.Pending, WAMID: "wamid.2"},
			ev: status(campaign.DeliveryDelivered), want: campaign.StatusAction{}},

		{name: "permanent failure fails", row: sent, ev: failed(131026),
			want: campaign.StatusAction{Move: campaign.StatusFail, Error: errText(131026)}},
		{name: "131050 fails and suppresses", row: sent, ev: failed(131050),
			want: campaign.StatusAction{Move: campaign.StatusFail, Error: errText(131050), Suppress: "error 131050 in campaign 7 (status webhook)"}},
		{name: "131049 rescheduled a day later", row: sent, ev: failed(131049),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(131049), RetryAt: now.Add(MarketingLimitWait)}},
		{name: "131049 waits as long as the policy says, never less than a day", policy: Policy{Reschedule: 30 * time.Hour}, row: sent, ev: failed(131049),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(131049), RetryAt: now.Add(30 * time.Hour)}},
		{name: "131049 fails with --no-reschedule", policy: Policy{NoReschedule: true}, row: sent, ev: failed(131049),
			want: campaign.StatusAction{Move: campaign.StatusFail, Error: errText(131049)}},
		{name: "long restriction: resent now, the account stops", row: sent, ev: failed(131048),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(131048), RetryAt: now, RestrictUntil: now.Add(6 * time.Hour)}},
		{name: "long restriction for as long as the policy says", policy: Policy{Restriction: time.Hour}, row: sent, ev: failed(131048),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(131048), RetryAt: now, RestrictUntil: now.Add(time.Hour)}},
		{name: "long restriction of a row without an account", row: with(sent, func(r *campaign.StatusRow) { r.AccountID = 0 }), ev: failed(131048),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(131048), RetryAt: now}},
		{name: "campaign fatal: resent, the campaign pauses", row: sent, ev: failed(132015),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(132015), RetryAt: now, Pause: errText(132015)}},
		{name: "account fatal: resent, the account leaves the campaign", row: sent, ev: failed(190),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(190), RetryAt: now, DropAccount: true}},
		{name: "account fatal of a row without an account", row: with(sent, func(r *campaign.StatusRow) { r.AccountID = 0 }), ev: failed(190),
			want: campaign.StatusAction{Move: campaign.StatusReschedule, Error: errText(190), RetryAt: now}},

		{name: "a received row is never failed nor resent", row: with(sent, func(r *campaign.StatusRow) { r.Delivery = campaign.DeliveryDelivered }),
			ev: failed(131049), want: campaign.StatusAction{NotResent: true, Error: errText(131049)}},
		{name: "a received row's campaign-fatal failure pauses nothing",
			row: with(sent, func(r *campaign.StatusRow) { r.Delivery = campaign.DeliveryRead }), ev: failed(132015),
			want: campaign.StatusAction{NotResent: true, Error: errText(132015)}},
		{name: "a received row's opt-out still suppresses", row: with(sent, func(r *campaign.StatusRow) { r.Delivery = campaign.DeliveryRead }), ev: failed(131050),
			want: campaign.StatusAction{NotResent: true, Error: errText(131050), Suppress: "error 131050 in campaign 7 (status webhook)"}},
		{name: "a received row's restriction stops the account", row: with(sent, func(r *campaign.StatusRow) { r.Delivery = campaign.DeliveryDelivered }), ev: failed(131048),
			want: campaign.StatusAction{NotResent: true, Error: errText(131048), RestrictUntil: now.Add(6 * time.Hour)}},
		{name: "a cancelled campaign's row fails instead of going back", row: with(sent, func(r *campaign.StatusRow) { r.Cancelled = true }), ev: failed(131049),
			want: campaign.StatusAction{NotResent: true, Move: campaign.StatusFail, Error: errText(131049) + notAgainCancelled}},
		{name: "a cancelled campaign does not pause", row: with(sent, func(r *campaign.StatusRow) { r.Cancelled = true }), ev: failed(132015),
			want: campaign.StatusAction{NotResent: true, Move: campaign.StatusFail, Error: errText(132015) + notAgainCancelled}},
		{name: "a cancelled campaign's restriction still stops the account", row: with(sent, func(r *campaign.StatusRow) { r.Cancelled = true }), ev: failed(131048),
			want: campaign.StatusAction{NotResent: true, Move: campaign.StatusFail, Error: errText(131048) + notAgainCancelled, RestrictUntil: now.Add(6 * time.Hour)}},
		{name: "a cancelled campaign's permanent failure fails as any", row: with(sent, func(r *campaign.StatusRow) { r.Cancelled = true }), ev: failed(131050),
			want: campaign.StatusAction{Move: campaign.StatusFail, Error: errText(131050), Suppress: "error 131050 in campaign 7 (status webhook)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewRules(tt.policy).Settle(tt.row, tt.ev, now); got != tt.want {
				t.Errorf("Settle(%+v, %s %d)\n got %+v\nwant %+v", tt.row, tt.ev.Status, tt.ev.ErrorCode, got, tt.want)
			}
		})
	}
}

// TestOptOut: a status no row matches suppresses its recipient only when
// it is the person's opt-out (131050) and names the number it came from.
func TestOptOut(t *testing.T) {
	optOut := campaign.StatusEvent{WAMID: "wamid.9", Status: campaign.DeliveryFailed, Recipient: "16505550001",
		PhoneNumberID: pnid, ErrorCode: 131050}
	tests := []struct {
		name              string
		ev                func(*campaign.StatusEvent)
		wantPhone, reason string
	}{
		{name: "opt-out", ev: func(*campaign.StatusEvent) {},
			wantPhone: "+16505550001", reason: "error 131050 from number " + pnid + " (status webhook)"},
		{name: "recipient with +", ev: func(e *campaign.StatusEvent) { e.Recipient = "+16505550001" },
			wantPhone: "+16505550001", reason: "error 131050 from number " + pnid + " (status webhook)"},
		{name: "another failure", ev: func(e *campaign.StatusEvent) { e.ErrorCode = 131026 }},
		{name: "not a failure", ev: func(e *campaign.StatusEvent) { e.Status, e.ErrorCode = campaign.DeliveryDelivered, 0 }},
		{name: "no recipient", ev: func(e *campaign.StatusEvent) { e.Recipient = "" }},
		{name: "sent to a user id", ev: func(e *campaign.StatusEvent) { e.Recipient, e.RecipientUserID = "", "US.1349" },
			wantPhone: "US.1349", reason: "error 131050 from number " + pnid + " (status webhook)"},
		{name: "no sending number", ev: func(e *campaign.StatusEvent) { e.PhoneNumberID = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := optOut
			tt.ev(&ev)
			if phone, reason := NewRules(Policy{}).OptOut(ev, t0); phone != tt.wantPhone || reason != tt.reason {
				t.Errorf("OptOut = %q, %q; want %q, %q", phone, reason, tt.wantPhone, tt.reason)
			}
		})
	}
}

func TestTemplatePause(t *testing.T) {
	for _, tt := range []struct {
		ev   campaign.TemplateEvent
		want string
	}{
		{campaign.TemplateEvent{Template: "spring_sale", Event: "PAUSED", Reason: "LOW_QUALITY"},
			"template spring_sale is PAUSED: LOW_QUALITY (template status webhook)"},
		{campaign.TemplateEvent{Template: "spring_sale", Event: "DISABLED", Reason: "NONE"},
			"template spring_sale is DISABLED (template status webhook)"},
		{campaign.TemplateEvent{Template: "spring_sale", Event: "REJECTED"}, "template spring_sale is REJECTED (template status webhook)"},
		{campaign.TemplateEvent{Template: "spring_sale", Event: "APPROVED"}, ""},
	} {
		if got := (Rules{}).TemplatePause(tt.ev); got != tt.want {
			t.Errorf("TemplatePause(%+v) = %q, want %q", tt.ev, got, tt.want)
		}
	}
}

func TestAccountStop(t *testing.T) {
	for _, tt := range []struct {
		policy Policy
		ev     campaign.AccountEvent
		why    string
		until  time.Time
	}{
		{Policy{}, campaign.AccountEvent{Field: "phone_number_quality_update", Event: "FLAGGED"},
			"phone_number_quality_update FLAGGED", t0.Add(6 * time.Hour)},
		{Policy{Restriction: time.Hour}, campaign.AccountEvent{Field: "account_update", Event: "ACCOUNT_RESTRICTION", Reason: "messaging limit TIER_250"},
			"account_update ACCOUNT_RESTRICTION: messaging limit TIER_250", t0.Add(time.Hour)},
	} {
		if why, until := NewRules(tt.policy).AccountStop(tt.ev, t0); why != tt.why || !until.Equal(tt.until) {
			t.Errorf("AccountStop(%+v) = %q, %v; want %q, %v", tt.ev, why, until, tt.why, tt.until)
		}
	}
}
