package cmd

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// inboundLine is one webhook body carrying what a person sent, as Meta
// posts it: msg is messages[0] without from, id and timestamp.
func inboundLine(t *testing.T, from, id string, at time.Time, typ string, msg map[string]any) string {
	t.Helper()
	m := map[string]any{"from": strings.TrimPrefix(from, "+"), "id": id, "timestamp": strconv.FormatInt(at.Unix(), 10), "type": typ}
	for k, v := range msg {
		m[k] = v
	}
	b, err := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": "1", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp", "metadata": map[string]any{"display_phone_number": "15550001111", "phone_number_id": "1234567890"},
			"contacts": []any{map[string]any{"wa_id": m["from"], "profile": map[string]any{"name": "A Person"}}},
			"messages": []any{m}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func textMsg(body string, context string) map[string]any {
	m := map[string]any{"text": map[string]any{"body": body}}
	if context != "" {
		m["context"] = map[string]any{"from": "15550001111", "id": context}
	}
	return m
}

// What people answered reaches show, status, --json, export and suppress
// list: replies and the reply rate per campaign and per account, the first
// reply per row, opt-outs by keyword and button with their reasons, an
// opt-in listed without lifting anything.
func TestInboundReplies(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	at := showT0.Add(2 * time.Hour)
	file := statusFile(t,
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "read", "4915100000001", "", at, 0),
		inboundLine(t, "+4915100000000", "wamid.in1", at.Add(time.Minute), "text", textMsg("Yes, send me the code", "wamid.HBgL02")),
		inboundLine(t, "+4915100000000", "wamid.in2", at.Add(2*time.Minute), "text", textMsg("and for my sister?", "")),
		inboundLine(t, "+4915100000001", "wamid.in3", at.Add(time.Hour), "text", textMsg("Stopp", "")),
		inboundLine(t, "+4915100000002", "wamid.in4", at.Add(3*time.Hour), "button", map[string]any{
			"button": map[string]any{"payload": "Stop promotions", "text": "Stop promotions"}, "context": map[string]any{"id": "wamid.HBgL04"}}),
		inboundLine(t, "+4915100000006", "wamid.in5", at.Add(4*time.Hour), "reaction", map[string]any{
			"reaction": map[string]any{"message_id": "wamid.HBgL08", "emoji": "❤️"}}),
		inboundLine(t, "+4915199999999", "wamid.in6", at, "text", textMsg("who is this?", "")),
		inboundLine(t, "+4915100000000", "wamid.in7", at.Add(5*time.Hour), "hologram", map[string]any{"hologram": map[string]any{}}),
	)
	var rep applyJSON
	if err := json.Unmarshal([]byte(c.ok("webhook", "import", file, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Inbound != 7 || rep.InboundUnknown != 1 || rep.Replies != 4 || rep.OptOuts != 2 || rep.OptIns != 0 || rep.Malformed != 0 {
		t.Errorf("import = %+v; want 7 inbound (1 unknown), 4 replies, 2 opt-outs", rep)
	}

	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	d := show.Delivery
	// Sent: lines 2, 3, 4 and 8; all four answered, two with an opt-out.
	if d == nil || d.Sent != 4 || d.Replied != 4 || d.OptedOut != 2 || d.ReplyRate != 1 {
		t.Fatalf("show delivery = %+v", d)
	}
	st := c.status()
	if cd := st.Campaigns[0].Delivery; cd == nil || cd.Replied != 4 || cd.OptedOut != 2 {
		t.Errorf("status delivery = %+v", cd)
	}
	var replied int
	for _, a := range st.Accounts {
		if a.Delivery != nil {
			replied += a.Delivery.Replied
		}
	}
	if replied != 4 {
		t.Errorf("accounts' replies add up to %d, want 4", replied)
	}
	c.tty = true
	text := c.ok("campaign", "show", "1")
	if st := c.ok("status"); !strings.Contains(st, "Replies (inbound messages)") || !strings.Contains(st, "OPTED OUT") {
		t.Errorf("status on a terminal has no replies table:\n%s", st)
	}
	c.tty = false
	if st := c.ok("status"); !strings.Contains(st, "kind=campaign_replies id=1 name=spring.csv sent=4 replied=4 replied_sent=100.0% opted_out=2\n") {
		t.Errorf("piped status has no replies row:\n%s", st)
	}
	if !strings.Contains(text, "4 (100.0% of sent), 2 opted out") {
		t.Errorf("show does not say the replies:\n%s", text)
	}
	if piped := c.ok("campaign", "show", "1"); !strings.Contains(piped, "replies\t4\t2\t1.0000\n") {
		t.Errorf("piped show has no replies record:\n%s", piped)
	}

	rows := parseExport(t, c.ok("campaign", "export", "1"))
	got := map[string]string{}
	for _, r := range rows {
		got[r["line"]] = r["replied_at"] + "|" + r["reply"] + "|" + r["opted_out_at"]
	}
	want := map[string]string{
		"2": "2026-11-30T16:01:00Z|Yes, send me the code|",
		"3": "2026-11-30T17:00:00Z|Stopp|2026-11-30T17:00:00Z",
		"4": "2026-11-30T19:00:00Z|Stop promotions|2026-11-30T19:00:00Z",
		"8": "2026-11-30T20:00:00Z|❤️|",
		"5": "||",
	}
	for line, w := range want {
		if got[line] != w {
			t.Errorf("export line %s = %q, want %q", line, got[line], w)
		}
	}

	// An opt-in keyword later is listed and lifts nothing.
	c.ok("webhook", "import", statusFile(t, inboundLine(t, "+4915100000001", "wamid.in8", at.Add(6*time.Hour), "text", textMsg("START", ""))))
	var list []suppressionJSON
	if err := json.Unmarshal([]byte(c.ok("suppress", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	why := map[string]suppressionJSON{}
	for _, s := range list {
		why[s.Phone] = s
	}
	if s := why["+4915100000001"]; s.Reason != `keyword "STOPP"` || s.OptIn == nil || s.OptIn.Reason != `keyword "START"` {
		t.Errorf("+4915100000001 listed as %+v, want keyword STOPP with the START opt-in", s)
	}
	if s := why["+4915100000002"]; s.Reason != "opt-out button" || !s.CreatedAt.Equal(at.Add(3*time.Hour)) {
		t.Errorf("+4915100000002 listed as %+v, want the opt-out button at the time it was tapped", s)
	}
	_, errOut, err := c.run("suppress", "list")
	if err != nil || !strings.Contains(errOut, "1 suppressed number(s) sent an opt-in") {
		t.Errorf("suppress list: %v, stderr %q", err, errOut)
	}
}

// Keyword lists and durations are checked at config set: a list that does
// not parse is refused with its line, and nothing is stored.
func TestConfigInboundSettings(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	if got := c.ok("config", "get", "reply-window"); got != "72h\n" {
		t.Errorf("reply-window = %q, want the default 72h", got)
	}
	if got := c.ok("config", "get", "optout-keywords"); !strings.HasPrefix(got, "STOP\n") || !strings.Contains(got, "ARRÊT\n") {
		t.Errorf("default opt-out keywords:\n%s", got)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"optout-keywords", "STOP\nHALT,,END"}, "optout-keywords: line 2: an empty keyword"},
		{[]string{"optout-keywords", "STOP\nhalt\nHALT"}, `optout-keywords: line 3: "HALT" is listed already on line 2`},
		{[]string{"optin-keywords", "START\nstop"}, `"stop" is also an opt-out keyword`},
		{[]string{"reply-window", "soon"}, `reply-window: "soon" is not a positive duration`},
	} {
		if msg := c.usage(append([]string{"config", "set"}, tt.args...)...); !strings.Contains(msg, tt.want) {
			t.Errorf("config set %q: %q, want %q", tt.args, msg, tt.want)
		}
	}
	if got := c.ok("config", "get", "optout-keywords"); !strings.HasPrefix(got, "STOP\nSTOP ALL\n") {
		t.Errorf("a refused list was stored:\n%s", got)
	}
	c.stdin = "# ours\nHALT\nENOUGH, BASTA\n"
	c.ok("config", "set", "optout-keywords", "-")
	if got := c.ok("config", "get", "optout-keywords"); got != "HALT\nENOUGH\nBASTA\n" {
		t.Errorf("optout-keywords from stdin = %q", got)
	}
	c.ok("config", "set", "reply-window", "2d")
	c.ok("config", "set", "inbound-retention", "30d")
	if got := c.ok("config", "get", "reply-window") + c.ok("config", "get", "inbound-retention"); got != "48h\n30d\n" {
		t.Errorf("durations = %q", got)
	}
	c.ok("config", "set", "optout-keywords", "default")
	if got := c.ok("config", "get", "optout-keywords"); !strings.HasPrefix(got, "STOP\n") {
		t.Errorf("default again:\n%s", got)
	}
}

// The demo ends with replies and opt-outs: the sandbox's recipients answer,
// the run's receiver keeps the answers, and the run's last lines, show,
// export and suppress list agree on them.
func TestSandboxDemoEndsWithReplies(t *testing.T) {
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--rate", "1000", "--burst", "100")
	}
	_, errOut, err := c.run("campaign", "run", "--sandbox", "../testdata/recipients.csv", "--log-level", "error")
	if err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "replies (inbound messages): ") || !strings.Contains(errOut, "opted out and suppressed") {
		t.Errorf("the demo does not end with replies and opt-outs:\n%s", errOut)
	}
	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json", "--sandbox")), &show); err != nil {
		t.Fatal(err)
	}
	d := show.Delivery
	if d == nil || d.Replied == 0 || d.OptedOut == 0 {
		t.Fatalf("show delivery = %+v, want replies and opt-outs", d)
	}
	replied, optedOut := 0, map[string]bool{}
	for _, r := range parseExport(t, c.ok("campaign", "export", "1", "--sandbox")) {
		if r["replied_at"] != "" {
			replied++
		}
		if r["opted_out_at"] != "" {
			optedOut[r["phone"]] = true
		}
	}
	if replied != d.Replied || len(optedOut) != d.OptedOut {
		t.Errorf("export: %d replied, %d opted out; show says %d and %d", replied, len(optedOut), d.Replied, d.OptedOut)
	}
	var list []suppressionJSON
	if err := json.Unmarshal([]byte(c.ok("suppress", "list", "--json", "--sandbox")), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Reason != `keyword "STOP"` && s.Reason != "opt-out button" {
			t.Errorf("%s suppressed for %q, want an inbound opt-out's reason", s.Phone, s.Reason)
		}
		delete(optedOut, s.Phone)
	}
	if len(optedOut) != 0 {
		t.Errorf("opted out by answering but not suppressed: %v", optedOut)
	}
}
