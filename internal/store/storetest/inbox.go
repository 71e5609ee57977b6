package storetest

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// The webhook inbox: bodies stored first, then drained, each exactly once,
// moving sent rows up the delivery ladder (sent → delivered → read) as
// the harness's Drain decides.

func (s suite) inboxTests() []sub {
	return []sub{
		{"statuses drain to delivered and read", s.testInboxDrainsStatuses},
		{"a status for a row in flight waits for its send", s.testInboxStatusBeforeRecord},
		{"two handles drain one inbox at once", s.testInboxTwoDrains},
		{"bodies are kept byte for byte, in the order given", s.testInboxKeepsBodies},
		{"links keep only a number paired with a user id", s.testInboxLearnsLinks},
	}
}

// testInboxLearnsLinks: LearnLinks keeps what campaign.IdentityLink.Pairs
// accepts (a number and a user id) and nothing else a body may pair; a
// changed pair replaces an older one, an older sighting changes nothing.
func (s suite) testInboxLearnsLinks(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	const id, other = "US.13491208655302741918", "DE.abc123"
	learn := func(at time.Time, links ...campaign.IdentityLink) {
		t.Helper()
		if err := st.WithInbox(t.Context(), func(tx driver.InboxTx, _ time.Time) error { return tx.LearnLinks(t.Context(), links, at) }); err != nil {
			t.Fatal(err)
		}
	}
	learn(t0,
		campaign.IdentityLink{Phone: "+4915112345678", UserID: id},
		campaign.IdentityLink{Phone: other, UserID: "US.999"},           // two ids
		campaign.IdentityLink{Phone: "4915112345670", UserID: "US.998"}, // no +
		campaign.IdentityLink{Phone: "+4915112345671", UserID: "+4915112345672"})
	learn(t0.Add(time.Hour), campaign.IdentityLink{Phone: "+4915112345679", UserID: id})
	learn(t0.Add(time.Minute), campaign.IdentityLink{Phone: "+4915112345677", UserID: id}) // older than the last: kept out
	if n := CountRows(t, st, `SELECT count(*) FROM recipient_links`); n != 1 {
		t.Errorf("%d links kept, want only the number paired with %s", n, id)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM recipient_links WHERE user_id = ? AND phone = '+4915112345679' AND seen_at = ?`,
		id, t0.Add(time.Hour).UnixNano()); n != 1 {
		t.Errorf("the link of %s is not the latest pair seen", id)
	}
}

// testInboxKeepsBodies: a receiver's commit of many bodies (more than one
// statement's worth) keeps each exactly as it came, in the order given,
// after what was stored before.
func (s suite) testInboxKeepsBodies(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	var want [][]byte
	for i := range 601 {
		// Meta signs escaped Unicode: the bytes, not their meaning, are kept.
		want = append(want, []byte(`{"n":`+strconv.Itoa(i)+`,"note":"caf\u00e9 \u0000","raw":"é"}`))
	}
	want = append(want, []byte{0xff, 0x00, '{'}) // not even text
	if err := st.AddToInbox(t.Context(), want[:1]); err != nil {
		t.Fatal(err)
	}
	if err := st.AddToInbox(t.Context(), want[1:]); err != nil {
		t.Fatal(err)
	}
	var got []driver.InboxBody
	err := st.WithInbox(t.Context(), func(tx driver.InboxTx, _ time.Time) (err error) {
		got, err = tx.Bodies(t.Context(), 1000)
		return err
	})
	if err != nil || len(got) != len(want) {
		t.Fatalf("Bodies = %d bodies, %v; want %d", len(got), err, len(want))
	}
	for i, b := range got {
		if string(b.Body) != string(want[i]) || i > 0 && b.ID <= got[i-1].ID {
			t.Fatalf("body %d (id %d) = %q, want %q, after id %d", i, b.ID, b.Body, want[i], got[max(i-1, 0)].ID)
		}
	}
}

func (s suite) needRules(t *testing.T) {
	if s.h.Drain == nil {
		t.Skip("the harness gives no Drain")
	}
}

// inboxPNID is the sending number of the inbox tests: webhooks name the
// number they were sent from, and only an account's own number matches.
const inboxPNID = "106540352242922"

// statusBody is a messages notification, as Meta posts it, of one status
// per row: wamid, callback data and the recipient of each claim.
func statusBody(t *testing.T, c campaign.Campaign, sts ...rowStatus) []byte {
	t.Helper()
	var list []map[string]any
	for _, s := range sts {
		list = append(list, map[string]any{
			"id": s.wamid, "status": s.status, "timestamp": strconv.FormatInt(t0.Add(s.at).Unix(), 10),
			"recipient_id":             s.claim.Message.Phone[1:],
			"biz_opaque_callback_data": campaign.CallbackData(c.ID, s.claim.Message.ID),
			"pricing":                  map[string]any{"billable": true, "pricing_model": "PMP", "category": "marketing", "type": "regular"},
		})
	}
	b, err := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": inboxPNID},
			"statuses":          list,
		}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type rowStatus struct {
	claim  campaign.Claim
	wamid  string
	status string
	at     time.Duration // after t0
}

// inboxCampaign is a campaign of n rows, every one claimed by r1 on the
// account whose number is inboxPNID.
func inboxCampaign(t *testing.T, st driver.Driver, n int) (campaign.Campaign, []campaign.Claim) {
	t.Helper()
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "main", PhoneNumberID: inboxPNID, Tier: campaign.TierActive, TokenEnv: "WA_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "inbox", n)
	cs, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", t0, n)
	if err != nil || len(cs) != n {
		t.Fatalf("ClaimN = %d, %v; want %d", len(cs), err, n)
	}
	return c, cs
}

func (s suite) drain(t *testing.T, st driver.Driver, bodies ...[]byte) campaign.ApplyReport {
	t.Helper()
	if err := st.AddToInbox(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	rep, err := s.h.Drain(t.Context(), st, 100)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func deliveryOf(t *testing.T, st driver.Driver, id int64) campaign.Delivery {
	t.Helper()
	var d *string
	if err := checked(st).QueryRowContext(t.Context(), `SELECT delivery FROM messages WHERE id = ?`, id).Scan(&d); err != nil {
		t.Fatal(err)
	}
	if d == nil {
		return ""
	}
	return campaign.Delivery(*d)
}

// testInboxDrainsStatuses: each row's statuses, in any order, leave it on
// the highest rung it reached; a body is applied once, a second drain finds
// nothing, and the delivery figures read the rows' rungs.
func (s suite) testInboxDrainsStatuses(t *testing.T) {
	s.needRules(t)
	clk := newFakeClock()
	st := s.openTest(t, clk)
	tests := []struct {
		statuses []string
		want     campaign.Delivery
	}{
		{[]string{"sent"}, campaign.DeliverySent},
		{[]string{"sent", "delivered"}, campaign.DeliveryDelivered},
		{[]string{"delivered", "read"}, campaign.DeliveryRead},
		{[]string{"read", "delivered", "sent"}, campaign.DeliveryRead}, // never back down
		{nil, ""},
	}
	c, cs := inboxCampaign(t, st, len(tests))
	var sent []campaign.Result
	for i, cl := range cs {
		sent = append(sent, campaign.Result{Claim: cl, At: at(time.Second),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.row" + strconv.Itoa(i), Class: "ok"}})
	}
	if err := st.RecordAll(t.Context(), "r1", sent); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Minute))
	var bodies [][]byte
	statuses := 0
	for i, tt := range tests {
		for j, status := range tt.statuses {
			bodies = append(bodies, statusBody(t, c, rowStatus{cs[i], "wamid.row" + strconv.Itoa(i), status, time.Duration(2+j) * time.Second}))
			statuses++
		}
	}
	rep := s.drain(t, st, bodies...)
	if rep.Bodies != len(bodies) || rep.Statuses != statuses || rep.Unmatched != 0 || rep.Malformed != 0 {
		t.Errorf("report %+v; want %d bodies, %d statuses, all matched", rep, len(bodies), statuses)
	}
	for i, tt := range tests {
		if got := deliveryOf(t, st, cs[i].Message.ID); got != tt.want {
			t.Errorf("row %d after %v: delivery %q, want %q", i, tt.statuses, got, tt.want)
		}
	}
	if rep, err := s.h.Drain(t.Context(), st, 100); err != nil || rep.Bodies != 0 {
		t.Errorf("second drain: %+v, %v; want an empty inbox", rep, err)
	}
	fig, err := readmodel.New(st).CampaignDelivery(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Sent != 5 || fig.Delivered != 3 || fig.Read != 2 {
		t.Errorf("figures %+v; want 5 sent, 3 delivered, 2 read", fig)
	}
	if n, _ := st.Counts(t.Context(), c.ID); n[campaign.Sent] != 5 {
		t.Errorf("counts %v: a status moved a row out of sent", n)
	}
}

// testInboxStatusBeforeRecord: a status can arrive before the sender
// recorded its answer; it leaves the row in flight alone, and the next
// drain after the send is recorded settles it (no status is lost).
func (s suite) testInboxStatusBeforeRecord(t *testing.T) {
	s.needRules(t)
	st := s.openTest(t, newFakeClock())
	c, cs := inboxCampaign(t, st, 1)
	rep := s.drain(t, st, statusBody(t, c, rowStatus{cs[0], "wamid.early", "delivered", 2 * time.Second}))
	if rep.Deferred != 1 {
		t.Errorf("report %+v; want the status deferred", rep)
	}
	if got := deliveryOf(t, st, cs[0].Message.ID); got != "" {
		t.Errorf("a row in flight reads delivery %q", got)
	}
	if n, _ := st.Counts(t.Context(), c.ID); n[campaign.Sending] != 1 {
		t.Errorf("counts %v; want the row still sending", n)
	}
	if err := record(t, st, cs[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.early", Class: "ok"}, at(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	s.drain(t, st)
	if got := deliveryOf(t, st, cs[0].Message.ID); got != campaign.DeliveryDelivered {
		t.Errorf("after its send was recorded: delivery %q, want delivered", got)
	}
}
