package storetest

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// Inbound messages: kept once, linked to the message they reply to,
// suppressing an opt-out's number, counted per campaign, pruned after
// their retention; the inbound settings and the opt-ins read back.

func (s suite) inboundTests() []sub {
	return []sub{
		{"answers reply, opt out and opt in", s.testInboundAnswers},
		{"inbound settings and retention", s.testInboundSettings},
	}
}

// inboundBody is a messages notification, as Meta posts it, of what the
// recipients of claims sent: text bodies, each quoting our message when
// quote is set.
func inboundBody(t *testing.T, msgs ...inboundMsg) []byte {
	t.Helper()
	var list []map[string]any
	for _, m := range msgs {
		e := map[string]any{"from": m.claim.Message.Phone[1:], "id": m.id, "timestamp": strconv.FormatInt(t0.Add(m.at).Unix(), 10),
			"type": "text", "text": map[string]any{"body": m.text}}
		if m.quote != "" {
			e["context"] = map[string]any{"from": "15550783881", "id": m.quote}
		}
		list = append(list, e)
	}
	b, err := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp",
			"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": inboxPNID},
			"messages":          list,
		}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type inboundMsg struct {
	claim campaign.Claim
	id    string
	text  string
	quote string        // context.id
	at    time.Duration // after t0
}

func (s suite) testInboundAnswers(t *testing.T) {
	s.needRules(t)
	clk := newFakeClock()
	st := s.openTest(t, clk)
	c, cs := inboxCampaign(t, st, 3)
	var sent []campaign.Result
	for i, cl := range cs {
		sent = append(sent, campaign.Result{Claim: cl, At: at(time.Second),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.row" + strconv.Itoa(i), Class: "ok"}})
	}
	if err := st.RecordAll(t.Context(), "r1", sent); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Hour))
	body := inboundBody(t,
		inboundMsg{cs[0], "wamid.in0", "Yes please", "wamid.row0", time.Minute},
		inboundMsg{cs[1], "wamid.in1", "STOP", "", 2 * time.Minute},
		inboundMsg{cs[1], "wamid.in2", "START", "", 3 * time.Minute})
	rep := s.drain(t, st, body, body)
	if rep.Inbound != 6 || rep.Replies != 2 || rep.OptOuts != 1 || rep.OptIns != 1 {
		t.Errorf("report %+v; want 6 read (3 twice), 2 replies, 1 opt-out, 1 opt-in", rep)
	}
	why, listed, err := isSuppressed(t, st, cs[1].Message.Phone)
	_, other, err2 := isSuppressed(t, st, cs[0].Message.Phone)
	if err != nil || err2 != nil || !listed || why == "" || other {
		t.Errorf("suppressed %s: %v (%q), %s: %v; errors %v, %v; want only %s, with a reason", cs[1].Message.Phone, listed, why,
			cs[0].Message.Phone, other, err, err2, cs[1].Message.Phone)
	}
	ins, err := readmodel.New(st).OptInsSinceSuppressed(t.Context())
	if err != nil || len(ins) != 1 || !ins[cs[1].Message.Phone].At.Equal(at(3*time.Minute)) {
		t.Errorf("opt-ins %+v, %v; want %s's START", ins, err, cs[1].Message.Phone)
	}
	fig, err := readmodel.New(st).CampaignDelivery(t.Context(), c.ID)
	if err != nil || fig.Replied != 2 || fig.OptedOut != 1 || fig.Sent != 3 {
		t.Errorf("figures %+v, %v; want 3 sent, 2 replied, 1 opted out", fig, err)
	}
	var rows []readmodel.ExportRow
	if err := readmodel.New(st).ExportMessages(t.Context(), c.ID, "", func(r readmodel.ExportRow) error {
		rows = append(rows, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Reply != "Yes please" || !rows[0].RepliedAt.Equal(at(time.Minute)) ||
		rows[1].Reply != "STOP" || rows[1].OptedOutAt.IsZero() || !rows[2].RepliedAt.IsZero() {
		t.Errorf("export rows %+v", rows)
	}
}

func (s suite) testInboundSettings(t *testing.T) {
	s.needRules(t)
	clk := newFakeClock()
	st := s.openTest(t, clk)
	if set, err := st.InboundSettings(t.Context()); err != nil || len(set) != 0 {
		t.Errorf("settings of a new database = %v, %v; want none", set, err)
	}
	if err := st.SetInboundSetting(t.Context(), "reply-window", "24h", false); err != nil {
		t.Fatal(err)
	}
	if set, err := st.InboundSettings(t.Context()); err != nil || set["reply-window"] != "24h" || len(set) != 1 {
		t.Errorf("settings = %v, %v", set, err)
	}
	if err := st.SetInboundSetting(t.Context(), "reply-window", "", true); err != nil {
		t.Fatal(err)
	}
	if set, _ := st.InboundSettings(t.Context()); len(set) != 0 {
		t.Errorf("settings after unset = %v", set)
	}
	_, cs := inboxCampaign(t, st, 1)
	s.drain(t, st, inboundBody(t, inboundMsg{cs[0], "wamid.old", "hi", "", time.Minute}, inboundMsg{cs[0], "wamid.new", "hi", "", time.Hour}))
	if n, err := st.PruneInbound(t.Context(), at(30*time.Minute)); err != nil || n != 1 {
		t.Errorf("PruneInbound = %d, %v; want the older one", n, err)
	}
	var left int
	if err := checked(st).QueryRowContext(t.Context(), `SELECT count(*) FROM inbound_messages`).Scan(&left); err != nil || left != 1 {
		t.Errorf("%d inbound messages left (%v), want 1", left, err)
	}
}
