package storetest

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// A row a 131049 put back (pending again, its wamid cleared) is still the
// row its old wamid names: a later status without callback data finds it
// through the wamid's kept statuses and settles it, and an answer quoting
// that wamid replies to it. Nobody is sent the message twice.

func (s suite) putBackTests() []sub {
	return []sub{
		{"a status finds the row its 131049 put back", s.testStatusFindsPutBackRow},
	}
}

// putBackStatus is a messages notification of one status of claim cl's
// message wamid; cb: with the callback data wasend set, code: a failure's.
func putBackStatus(t *testing.T, c campaign.Campaign, cl campaign.Claim, wamid, status string, after time.Duration, cb bool, code int) []byte {
	t.Helper()
	st := map[string]any{"id": wamid, "status": status, "timestamp": strconv.FormatInt(t0.Add(after).Unix(), 10),
		"recipient_id": cl.Message.Phone[1:]}
	if cb {
		st["biz_opaque_callback_data"] = campaign.CallbackData(c.ID, cl.Message.ID)
	}
	if code != 0 {
		st["errors"] = []any{map[string]any{"code": code, "title": "Message not delivered"}}
	}
	b, err := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": inboxPNID},
			"statuses":          []any{st},
		}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s suite) testStatusFindsPutBackRow(t *testing.T) {
	s.needRules(t)
	clk := newFakeClock()
	st := s.openTest(t, clk)
	c, cs := inboxCampaign(t, st, 1)
	if err := record(t, st, cs[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.back", Class: "ok"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Minute))
	if rep := s.drain(t, st, putBackStatus(t, c, cs[0], "wamid.back", "failed", 30*time.Second, true, 131049)); rep.Rescheduled != 1 {
		t.Fatalf("report %+v; want the 131049 to put the row back", rep)
	}
	var wamid *string
	if err := checked(st).QueryRowContext(t.Context(), `SELECT wamid FROM messages WHERE id = ?`, cs[0].Message.ID).Scan(&wamid); err != nil || wamid != nil {
		t.Fatalf("wamid of the row put back = %v, %v; want cleared", wamid, err)
	}
	// An answer quoting the wamid comes while the row is pending (no
	// message to its phone is sent); then the delivery Meta posted before
	// the failure, without callback data.
	clk.Set(at(time.Hour))
	if rep := s.drain(t, st, inboundBody(t, inboundMsg{cs[0], "wamid.in0", "thanks", "wamid.back", 40 * time.Minute})); rep.Replies != 1 {
		t.Errorf("report %+v; want the answer a reply to the row its context.id names", rep)
	}
	if rep := s.drain(t, st, putBackStatus(t, c, cs[0], "wamid.back", "delivered", 20*time.Second, false, 0)); rep.Unmatched != 0 || rep.Adopted != 1 {
		t.Errorf("report %+v; want the delivery matched and adopted", rep)
	}
	if err := checked(st).QueryRowContext(t.Context(), `SELECT wamid FROM messages WHERE id = ?`, cs[0].Message.ID).Scan(&wamid); err != nil || wamid == nil || *wamid != "wamid.back" {
		t.Errorf("wamid of the row = %v, %v; want wamid.back again", wamid, err)
	}
	if got := deliveryOf(t, st, cs[0].Message.ID); got != campaign.DeliveryDelivered {
		t.Errorf("delivery %q, want delivered", got)
	}
	if n, _ := st.Counts(t.Context(), c.ID); n[campaign.Sent] != 1 || n[campaign.Pending] != 0 {
		t.Errorf("counts %v; want the row sent again by its own wamid", n)
	}
	fig, err := readmodel.New(st).CampaignDelivery(t.Context(), c.ID)
	if err != nil || fig.Replied != 1 || fig.Delivered != 1 {
		t.Errorf("figures %+v, %v; want 1 delivered, 1 replied", fig, err)
	}
	if got, err := ledger(st).ClaimN(t.Context(), c.ID, "r2", at(48*time.Hour), 1); len(got) != 0 {
		t.Errorf("claimed %d rows two days later (%v): the person would get the message twice", len(got), err)
	}
}
