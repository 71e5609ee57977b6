package webhook

import (
	"bytes"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// inbound is one entry of messages[] from row i's recipient, at t0+at.
func inbound(row int, id string, at time.Duration, typ string, fields map[string]any) map[string]any {
	m := map[string]any{"from": phone(row)[1:], "id": id, "timestamp": strconv.FormatInt(t0.Add(at).Unix(), 10), "type": typ}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

// inboundBody is a messages webhook carrying msgs, with the senders'
// contacts, as Meta posts what people send.
func inboundBody(msgs ...map[string]any) []byte {
	var contacts []map[string]any
	for _, m := range msgs {
		contacts = append(contacts, map[string]any{"profile": map[string]any{"name": "Sheena Nelson"}, "wa_id": m["from"]})
	}
	return envelope("messages", map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid},
		"contacts":          contacts,
		"messages":          msgs,
	})
}

func text(body string) map[string]any { return map[string]any{"text": map[string]any{"body": body}} }

func TestDecodeInbound(t *testing.T) {
	tests := []struct {
		name string
		msg  map[string]any
		want campaign.InboundMessage
	}{
		{"text answering ours", inbound(0, "wamid.in1", time.Minute, "text", map[string]any{
			"text": map[string]any{"body": "Yes please"}, "context": map[string]any{"from": "15550783881", "id": "wamid.row0"}}),
			campaign.InboundMessage{WAMID: "wamid.in1", Type: "text", Text: "Yes please", ContextID: "wamid.row0"}},
		{"quick-reply button", inbound(0, "wamid.in2", time.Minute, "button", map[string]any{
			"button": map[string]any{"payload": "Stop promotions", "text": "Stop promotions"}, "context": map[string]any{"id": "wamid.row0"}}),
			campaign.InboundMessage{WAMID: "wamid.in2", Type: "button", Text: "Stop promotions", Payload: "Stop promotions", ContextID: "wamid.row0"}},
		{"interactive button reply", inbound(0, "wamid.in3", time.Minute, "interactive", map[string]any{
			"interactive": map[string]any{"type": "button_reply", "button_reply": map[string]any{"id": "yes-1", "title": "Yes"}}}),
			campaign.InboundMessage{WAMID: "wamid.in3", Type: "interactive", Text: "Yes", Payload: "yes-1"}},
		{"list reply", inbound(0, "wamid.in4", time.Minute, "interactive", map[string]any{
			"interactive": map[string]any{"type": "list_reply", "list_reply": map[string]any{"id": "row-2", "title": "Tuesday", "description": "9-12"}}}),
			campaign.InboundMessage{WAMID: "wamid.in4", Type: "interactive", Text: "Tuesday", Payload: "row-2"}},
		{"reaction", inbound(0, "wamid.in5", time.Minute, "reaction", map[string]any{
			"reaction": map[string]any{"message_id": "wamid.row0", "emoji": "👍"}}),
			campaign.InboundMessage{WAMID: "wamid.in5", Type: "reaction", Text: "👍", ContextID: "wamid.row0"}},
		{"image with caption", inbound(0, "wamid.in6", time.Minute, "image", map[string]any{
			"image": map[string]any{"caption": "my receipt", "mime_type": "image/jpeg", "sha256": "abc", "id": "2754859441498128"}}),
			campaign.InboundMessage{WAMID: "wamid.in6", Type: "image", Text: "my receipt", Payload: "2754859441498128"}},
		{"a type wasend does not know", inbound(0, "wamid.in7", time.Minute, "hologram", map[string]any{"hologram": map[string]any{"id": 1}}),
			campaign.InboundMessage{WAMID: "wamid.in7", Type: "hologram", Unknown: true}},
		{"a known field of another shape", inbound(0, "wamid.in8", time.Minute, "text", map[string]any{"text": "STOP"}),
			campaign.InboundMessage{WAMID: "wamid.in8", Type: "text", Unknown: true}},
		{"a timestamp that is not a number", map[string]any{"from": phone(0)[1:], "id": "wamid.in9", "timestamp": "yesterday", "type": "text",
			"text": map[string]any{"body": "hi"}},
			campaign.InboundMessage{WAMID: "wamid.in9", Type: "text", Text: "hi", Unknown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Decode(inboundBody(tt.msg))
			if err != nil {
				t.Fatalf("Decode: %v (an inbound message is never fatal)", err)
			}
			if len(n.Inbound) != 1 {
				t.Fatalf("inbound = %+v, want one", n.Inbound)
			}
			got := n.Inbound[0]
			want := tt.want
			want.From, want.PhoneNumberID, want.Name = phone(0)[1:], pnid, "Sheena Nelson"
			if !want.Unknown || tt.name == "a timestamp that is not a number" {
				want.At = got.At
			}
			if got.Unknown != want.Unknown || (got.Unknown && got.Raw == "") {
				t.Errorf("unknown %v with raw %q, want unknown %v and the entry kept", got.Unknown, got.Raw, want.Unknown)
			}
			got.Raw, got.At = "", want.At
			if !got.Unknown && !got.At.Equal(t0.Add(time.Minute)) && tt.name != "a timestamp that is not a number" {
				t.Errorf("at %v", got.At)
			}
			got.Text, want.Text = strings.TrimSpace(got.Text), strings.TrimSpace(want.Text)
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestDecodeUserPreferences(t *testing.T) {
	body := envelope("user_preferences", map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid},
		"contacts":          []any{map[string]any{"wa_id": "16505551234"}},
		"user_preferences": []any{map[string]any{"wa_id": "16505551234", "detail": "User requested to stop marketing messages",
			"category": "marketing_messages", "value": "stop", "timestamp": t0.Unix()}},
	})
	n, err := Decode(body)
	if err != nil || len(n.Inbound) != 1 {
		t.Fatalf("Decode = %+v, %v", n.Inbound, err)
	}
	m := n.Inbound[0]
	if m.From != "16505551234" || m.Payload != "stop" || m.Unknown || m.WAMID == "" || !m.At.Equal(t0) {
		t.Errorf("preference = %+v", m)
	}
	if got := DefaultInbound().Inbound(m); got.Kind != campaign.InboundOptOut || got.Answers {
		t.Errorf("meaning = %+v, want an opt-out that is not an answer", got)
	}
}

func TestInboundMeaning(t *testing.T) {
	c := DefaultInbound()
	tests := []struct {
		typ, text, payload string
		kind               campaign.InboundKind
		reason             string
	}{
		{"text", "STOP", "", campaign.InboundOptOut, `keyword "STOP"`},
		{"text", "  stop! ", "", campaign.InboundOptOut, `keyword "STOP"`},
		{"text", "Stop all", "", campaign.InboundOptOut, `keyword "STOP ALL"`},
		{"text", "arret", "", campaign.InboundOptOut, `keyword "ARRÊT"`},
		{"text", "Arrêt.", "", campaign.InboundOptOut, `keyword "ARRÊT"`},
		{"text", "stopp", "", campaign.InboundOptOut, `keyword "STOPP"`},
		{"text", "Baja", "", campaign.InboundOptOut, `keyword "BAJA"`},
		{"text", "стоп", "", campaign.InboundOptOut, `keyword "СТОП"`},
		{"text", "please stop sending me these", "", campaign.InboundPlain, ""},
		{"text", "start", "", campaign.InboundOptIn, `keyword "START"`},
		{"text", "🛑", "", campaign.InboundPlain, ""},
		{"button", "Stop promotions", "Stop promotions", campaign.InboundOptOut, "opt-out button"},
		{"button", "Parar promoções", "Parar promoções", campaign.InboundOptOut, "opt-out button"},
		{"button", "Interested", "interested-1", campaign.InboundPlain, ""},
		{"interactive", "Stop", "btn-3", campaign.InboundOptOut, `keyword "STOP"`},
		{"reaction", "STOP", "", campaign.InboundPlain, ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.text, func(t *testing.T) {
			got := c.Inbound(campaign.InboundMessage{Type: tt.typ, Text: tt.text, Payload: tt.payload})
			if got.Kind != tt.kind || got.Reason != tt.reason || !got.Answers {
				t.Errorf("Inbound = %+v, want %q %q, an answer", got, tt.kind, tt.reason)
			}
		})
	}
}

func TestParseKeywords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"STOP\nUNSUBSCRIBE", []string{"STOP", "UNSUBSCRIBE"}, ""},
		{"# ours\nSTOP, Halt\n\n  ENOUGH  \r\n", []string{"STOP", "Halt", "ENOUGH"}, ""},
		{"none", []string{}, ""},
		{"STOP\nHALT,,END", nil, "line 2: an empty keyword"},
		{"STOP\n\n!!!", nil, `line 3: "!!!" has no letter or digit`},
		{"STOP\nstop", nil, `line 2: "stop" is listed already on line 1`},
		{"ARRÊT\narret", nil, `line 2: "arret" is listed already on line 1`},
		{`"STOP"`, nil, "line 1: "},
		{"STOP\n" + strings.Repeat("x", 65), nil, "line 2: "},
		{"STOP\nHA\x07LT", nil, "line 2: "},
		{"\n# nothing\n", nil, "no keyword"},
	}
	for _, tt := range tests {
		got, err := ParseKeywords(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseKeywords(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") || got == nil {
			t.Errorf("ParseKeywords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseInbound(t *testing.T) {
	if c := DefaultInbound(); c.ReplyWindow != 72*time.Hour || c.Retention != 90*24*time.Hour || len(c.OptOut) == 0 {
		t.Errorf("defaults = %+v", c)
	}
	c, err := ParseInbound(map[string]string{SettingReplyWindow: "24h", SettingRetention: "30d", SettingOptOutKeywords: "HALT"})
	if err != nil || c.ReplyWindow != 24*time.Hour || c.Retention != 30*24*time.Hour {
		t.Fatalf("ParseInbound = %+v, %v", c, err)
	}
	if got := c.Inbound(campaign.InboundMessage{Type: "text", Text: "stop"}); got.Kind != "" {
		t.Errorf("STOP after the list was replaced by HALT: %+v", got)
	}
	for _, bad := range []map[string]string{
		{SettingReplyWindow: "0h"}, {SettingRetention: "forever"}, {SettingRetention: "1.5d"},
		{SettingOptInKeywords: "START\nSTOP"}, // STOP is an opt-out keyword too
	} {
		if _, err := ParseInbound(bad); err == nil {
			t.Errorf("ParseInbound(%v) accepted", bad)
		}
	}
}

// post sends body to the receiver signed as Meta signs it.
func post(t *testing.T, url string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/", bytes.NewReader(body))
	req.Header.Set(SignatureHeader, Sign(secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST = %d", resp.StatusCode)
	}
}

// inboundRow is what the database kept of an inbound message.
type inboundRow struct {
	Phone, Type, Text, Kind, Reason string
	MessageID                       int64
	Unknown                         bool
	Raw                             string
}

func readInboundRow(t *testing.T, f *fixture, id string) (inboundRow, bool) {
	t.Helper()
	var (
		r   inboundRow
		mid sql.NullInt64
	)
	err := f.st.Reader().QueryRowContext(t.Context(), `SELECT phone, type, text, kind, reason, message_id, unknown, raw
		FROM inbound_messages WHERE id = ?`, id).Scan(&r.Phone, &r.Type, &r.Text, &r.Kind, &r.Reason, &mid, &r.Unknown, &r.Raw)
	if err == sql.ErrNoRows {
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	r.MessageID = mid.Int64
	return r, true
}

func firstReply(t *testing.T, f *fixture, row int) (at time.Time, text string) {
	t.Helper()
	var (
		n  sql.NullInt64
		tx sql.NullString
	)
	if err := f.st.Reader().QueryRowContext(t.Context(), `SELECT first_reply_at, first_reply_text FROM messages WHERE id = ?`,
		f.claims[row].Message.ID).Scan(&n, &tx); err != nil {
		t.Fatal(err)
	}
	return unixNanos(n), tx.String
}

// Signed inbound posts through the real receiver: answers become replies
// to the rows they answer, STOP and the opt-out button suppress their
// numbers with the reason suppress list shows, an opt-in is listed and
// lifts nothing, an unknown type is kept and counted, a retried body
// counts nothing twice, and an answer long after our message is kept but
// is no reply.
func TestInboundOverSignedPosts(t *testing.T) {
	f := newFixture(t, 6, Policy{})
	for i := range 6 {
		f.sent(t, i)
	}
	srv, _ := startReceiver(t, f)
	answer := inboundBody(inbound(0, "wamid.a0", 2*time.Hour, "text", map[string]any{
		"text": map[string]any{"body": "Is the offer still on?"}, "context": map[string]any{"id": wamid(0)}}))
	bodies := [][]byte{
		answer,
		inboundBody(inbound(1, "wamid.a1", time.Hour, "text", text(" Stop "))),
		inboundBody(inbound(2, "wamid.a2", 5*time.Minute, "button", map[string]any{
			"button": map[string]any{"payload": "Stop promotions", "text": "Stop promotions"}, "context": map[string]any{"id": wamid(2)}})),
		inboundBody(inbound(3, "wamid.a3", time.Minute, "hologram", map[string]any{"hologram": map[string]any{"beam": true}})),
		inboundBody(inbound(4, "wamid.a4", 73*time.Hour, "text", text("thanks, late reply"))),
		inboundBody(inbound(5, "wamid.a5", 10*time.Minute, "text", text("STOP")), inbound(5, "wamid.a6", 20*time.Minute, "text", text("start"))),
		answer, // Meta retries a body it thinks was not answered
	}
	for _, b := range bodies {
		post(t, srv.URL, b)
	}
	f.clk.Set(t0.Add(80 * time.Hour))
	rep, err := f.ap.Drain(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Inbound != 8 || rep.InboundUnknown != 1 || rep.OptOuts != 3 || rep.OptIns != 1 || rep.Replies != 4 || rep.Malformed != 0 || rep.Skipped != 0 {
		t.Errorf("report %+v; want 8 inbound read (1 unknown), 3 opt-outs, 1 opt-in, 4 replies", rep)
	}
	if at, txt := firstReply(t, f, 0); !at.Equal(t0.Add(2*time.Hour)) || txt != "Is the offer still on?" {
		t.Errorf("row 0's first reply %v %q", at, txt)
	}
	if at, _ := firstReply(t, f, 4); !at.IsZero() {
		t.Errorf("row 4 replied at %v: an answer 73 h after our message is outside the 72 h window", at)
	}
	if r, ok := readInboundRow(t, f, "wamid.a4"); !ok || r.MessageID != 0 || r.Text != "thanks, late reply" {
		t.Errorf("the late answer = %+v, %v; want kept, replying to nothing", r, ok)
	}
	if r, ok := readInboundRow(t, f, "wamid.a3"); !ok || !r.Unknown || !strings.Contains(r.Raw, `"beam":true`) {
		t.Errorf("the unknown type = %+v, %v; want kept with its entry", r, ok)
	}
	list, err := readmodel.New(f.st).Suppressions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]string{}
	for _, s := range list {
		why[s.Phone] = s.Reason
	}
	want := map[string]string{phone(1): `keyword "STOP"`, phone(2): "opt-out button", phone(5): `keyword "STOP"`}
	if len(why) != len(want) {
		t.Errorf("suppressed %v, want %v", why, want)
	}
	for p, r := range want {
		if why[p] != r {
			t.Errorf("%s suppressed for %q, want %q", p, why[p], r)
		}
	}
	ins, err := readmodel.New(f.st).OptInsSinceSuppressed(t.Context())
	if err != nil || len(ins) != 1 || ins[phone(5)].Reason != `keyword "START"` {
		t.Errorf("opt-ins = %+v, %v; want %s's START listed", ins, err, phone(5))
	}
	var replied, optedOut int
	if err := f.st.Reader().QueryRowContext(t.Context(), `SELECT sum(replied), sum(opted_out) FROM reply_counts WHERE campaign_id = ?`,
		f.c.ID).Scan(&replied, &optedOut); err != nil || replied != 4 || optedOut != 3 {
		t.Errorf("reply_counts = %d replied, %d opted out (%v); want 4 and 3", replied, optedOut, err)
	}
	for kind, want := range map[string]float64{"message": 8, "unknown": 1, "reply": 4, "opt_out": 3, "opt_in": 1} {
		if n := counter(t, f.ap.metrics.inbound.WithLabelValues(kind)); n != want {
			t.Errorf("inbound{%s} = %v, want %v", kind, n, want)
		}
	}
	// A second pass over the same bodies changes nothing.
	if err := f.st.AddToInbox(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	if rep, err := f.ap.Drain(t.Context()); err != nil || rep.Replies != 0 || rep.OptOuts != 0 || rep.Inbound != 8 {
		t.Errorf("again: %+v, %v; want 8 read and nothing new", rep, err)
	}
}

// The reply window and the keyword lists come from the database's
// settings at each drain; inbound messages past the retention are pruned.
func TestInboundSettingsAndRetention(t *testing.T) {
	f := newFixture(t, 2, Policy{})
	f.sent(t, 0)
	f.sent(t, 1)
	for k, v := range map[string]string{SettingReplyWindow: "1h", SettingOptOutKeywords: "HALT", SettingRetention: "2d"} {
		if err := f.st.SetInboundSetting(t.Context(), k, v, false); err != nil {
			t.Fatal(err)
		}
	}
	rep := f.deliver(t, inboundBody(inbound(0, "wamid.b0", 2*time.Hour, "text", text("hello?")),
		inbound(1, "wamid.b1", 30*time.Minute, "text", text("STOP")), inbound(1, "wamid.b2", 40*time.Minute, "text", text("halt"))))
	if rep.Replies != 1 || rep.OptOuts != 1 {
		t.Errorf("report %+v; want one reply (row 1 within 1 h; row 0 after it) and one opt-out (HALT, not STOP)", rep)
	}
	if supp, _ := isSuppressed(t, f.st, phone(1)); !supp {
		t.Errorf("HALT did not suppress")
	}
	// Three days later the applier's hourly prune deletes them.
	f.clk.Set(t0.Add(72 * time.Hour))
	f.deliver(t)
	if _, ok := readInboundRow(t, f, "wamid.b0"); ok {
		t.Errorf("an inbound message older than the 2 d retention is kept")
	}
	if at, _ := firstReply(t, f, 1); at.IsZero() {
		t.Errorf("the row's first reply went with the pruned inbound message")
	}
}

// An answer that comes while the message it answers is still in flight
// (its send not recorded yet) is linked at the drain after the send is.
func TestInboundBeforeSendRecorded(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	rep := f.deliver(t, inboundBody(inbound(0, "wamid.c0", time.Second, "text", text("STOP"))))
	if rep.OptOuts != 1 || rep.Replies != 0 {
		t.Errorf("report %+v; want the opt-out at once and no reply yet", rep)
	}
	if r, _ := readInboundRow(t, f, "wamid.c0"); r.MessageID != 0 {
		t.Errorf("linked to %d before the send was recorded", r.MessageID)
	}
	f.sent(t, 0)
	rep = f.deliver(t)
	if rep.Replies != 1 {
		t.Errorf("report %+v; want the reply linked once the send is recorded", rep)
	}
	if at, txt := firstReply(t, f, 0); at.IsZero() || txt != "STOP" {
		t.Errorf("first reply %v %q", at, txt)
	}
}

// An answer quoting a message that a 131049 put back (its wamid cleared)
// still replies to that row: context.id finds its row as a status does,
// through the wamid's kept statuses. Row 1's answer, quoting no wamid of
// ours, is no reply: the lookup finds nothing for a wamid never matched.
func TestReplyToMessagePutBack(t *testing.T) {
	f := newFixture(t, 2, Policy{})
	f.sent(t, 0)
	f.clk.Set(t0.Add(time.Minute))
	f.deliver(t, f.body(status{row: 0, status: "failed", at: 30 * time.Second, code: 131049, title: "Message not delivered"}))
	if d := f.msg(t, 0); d.State != campaign.Pending || d.WAMID != "" {
		t.Fatalf("row 0 after 131049 = %+v, want pending without its wamid", d)
	}
	f.clk.Set(t0.Add(time.Hour))
	rep := f.deliver(t, inboundBody(
		inbound(0, "wamid.a0", 10*time.Minute, "text", map[string]any{"text": map[string]any{"body": "got it"}, "context": map[string]any{"id": wamid(0)}}),
		inbound(1, "wamid.a1", 10*time.Minute, "text", map[string]any{"text": map[string]any{"body": "who?"}, "context": map[string]any{"id": "wamid.never"}})))
	if rep.Replies != 1 {
		t.Errorf("report %+v; want 1 reply", rep)
	}
	if at, txt := firstReply(t, f, 0); !at.Equal(t0.Add(10*time.Minute)) || txt != "got it" {
		t.Errorf("row 0's first reply %v %q; want the answer quoting its cleared wamid", at, txt)
	}
	if r, ok := readInboundRow(t, f, "wamid.a1"); !ok || r.MessageID != 0 {
		t.Errorf("answer quoting an unknown wamid = %+v, %v; want kept, replying to nothing", r, ok)
	}
}
