package webhook

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

const (
	ana = "US.13491208655302741918" // known by her number too
	ben = "GB.77"                   // known by his user id only
)

// Meta's shapes for a person with a username (docs/cloud-api.md#business-scoped-user-ids):
// statuses carry recipient_user_id, inbound messages from_user_id and
// contacts[].user_id, and the phone is left out when Meta hides it.
func TestDecodeBSUIDs(t *testing.T) {
	at := strconv.FormatInt(t0.Unix(), 10)
	body := envelope("messages", map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid},
		"contacts": []any{
			map[string]any{"profile": map[string]any{"name": "Ana"}, "wa_id": "16505550000", "user_id": ana},
			map[string]any{"profile": map[string]any{"name": "Ben", "username": "ben"}, "user_id": ben},
		},
		"messages": []any{
			map[string]any{"from": "16505550000", "from_user_id": ana, "id": "wamid.in1", "timestamp": at, "type": "text", "text": map[string]any{"body": "hi"}},
			map[string]any{"from_user_id": ben, "id": "wamid.in2", "timestamp": at, "type": "text", "text": map[string]any{"body": "STOP"}},
		},
		"statuses": []any{
			map[string]any{"id": "wamid.s1", "status": "delivered", "timestamp": at, "recipient_id": "16505550000", "recipient_user_id": ana},
			map[string]any{"id": "wamid.s2", "status": "read", "timestamp": at, "recipient_user_id": ben},
		},
	})
	n, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []campaign.IdentityLink{{Phone: "+16505550000", UserID: ana}, {Phone: "+16505550000", UserID: ana}}
	if !reflect.DeepEqual(n.Links, wantLinks) {
		t.Errorf("links %+v, want %+v (one from the status, one from the contacts)", n.Links, wantLinks)
	}
	if len(n.Statuses) != 2 || n.Statuses[0].RecipientUserID != ana || n.Statuses[1].RecipientUserID != ben || n.Statuses[1].Recipient != "" {
		t.Errorf("statuses %+v", n.Statuses)
	}
	if len(n.Inbound) != 2 {
		t.Fatalf("inbound %+v", n.Inbound)
	}
	if m := n.Inbound[0]; m.From != "16505550000" || m.UserID != ana || m.Name != "Ana" || m.Unknown {
		t.Errorf("Ana's message %+v", m)
	}
	if m := n.Inbound[1]; m.From != "" || m.UserID != ben || m.Name != "Ben" || m.Unknown {
		t.Errorf("Ben's message %+v: want a known message from his user id", m)
	}

	// A message naming no sender itself: the one contact is its sender.
	body = envelope("messages", map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"phone_number_id": pnid},
		"contacts":          []any{map[string]any{"profile": map[string]any{"name": "Ben"}, "user_id": ben}},
		"messages":          []any{map[string]any{"id": "wamid.in3", "timestamp": at, "type": "text", "text": map[string]any{"body": "hello"}}},
	})
	if n, err = Decode(body); err != nil || len(n.Inbound) != 1 || n.Inbound[0].UserID != ben || n.Inbound[0].Unknown {
		t.Errorf("sender from contacts: %+v, %v", n.Inbound, err)
	}
}

// Statuses and answers of people known by a user id reach their rows; a
// link learned from a webhook files a user-id-only answer under the number
// the row was sent to, and a user id's STOP suppresses the id.
func TestBSUIDRowsMatchWebhooks(t *testing.T) {
	f := newFixtureOf(t, []string{phone(0), ben}, Policy{})
	f.sent(t, 0)
	f.sent(t, 1)
	at := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	status := func(row int, st string, d time.Duration, recipient map[string]any) []byte {
		s := map[string]any{"id": wamid(row), "status": st, "timestamp": at(d),
			"biz_opaque_callback_data": campaign.CallbackData(f.c.ID, f.claims[row].Message.ID)}
		for k, v := range recipient {
			s[k] = v
		}
		return envelope("messages", map[string]any{"messaging_product": "whatsapp",
			"metadata": map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid}, "statuses": []any{s}})
	}
	answer := func(id string, d time.Duration, sender map[string]any, contact map[string]any, text string) []byte {
		m := map[string]any{"id": id, "timestamp": at(d), "type": "text", "text": map[string]any{"body": text}}
		for k, v := range sender {
			m[k] = v
		}
		return envelope("messages", map[string]any{"messaging_product": "whatsapp",
			"metadata": map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid},
			"contacts": []any{contact}, "messages": []any{m}})
	}

	rep := f.deliver(t,
		// Row 0 (a number): its status tells Ana's user id.
		status(0, "delivered", time.Minute, map[string]any{"recipient_id": phone(0)[1:], "recipient_user_id": ana}),
		// Row 1 (a user id): the status names the id only.
		status(1, "read", time.Minute, map[string]any{"recipient_user_id": ben}),
		// Ana answers with her number hidden: the link files it under it.
		answer("wamid.a0", time.Hour, map[string]any{"from_user_id": ana}, map[string]any{"user_id": ana}, "Yes please"),
		// Ben says STOP by his user id.
		answer("wamid.a1", time.Hour, map[string]any{"from_user_id": ben}, map[string]any{"user_id": ben}, "STOP"),
	)
	if rep.Unmatched != 0 || rep.Replies != 2 || rep.OptOuts != 1 || rep.Skipped != 0 {
		t.Errorf("report %+v; want every status matched, 2 replies, 1 opt-out", rep)
	}
	if d := f.msg(t, 0); d.Delivery != campaign.DeliveryDelivered {
		t.Errorf("row 0 delivery %q", d.Delivery)
	}
	if d := f.msg(t, 1); d.Delivery != campaign.DeliveryRead {
		t.Errorf("row 1 delivery %q", d.Delivery)
	}
	if r, ok := readInboundRow(t, f, "wamid.a0"); !ok || r.Phone != phone(0) || r.MessageID != f.claims[0].Message.ID {
		t.Errorf("Ana's answer %+v (kept %v): want it under %s, replying to row 0", r, ok, phone(0))
	}
	if r, ok := readInboundRow(t, f, "wamid.a1"); !ok || r.Phone != ben || r.MessageID != f.claims[1].Message.ID {
		t.Errorf("Ben's answer %+v (kept %v)", r, ok)
	}
	if ok, err := isSuppressed(t, f.st, ben); err != nil || !ok {
		t.Errorf("Ben suppressed by his user id: %v, %v", ok, err)
	}
	links, err := f.st.LinkedIn(t.Context(), []string{ana, phone(0), ben})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ana: {phone(0)}, phone(0): {ana}}
	if !reflect.DeepEqual(links, want) {
		t.Errorf("links %v, want %v", links, want)
	}
}
