package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statusFile writes webhook bodies, one a line, to a file for webhook
// import and returns its path.
func statusFile(t *testing.T, lines ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "statuses.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// statusLine is one webhook body with one status, as Meta posts it.
func statusLine(t *testing.T, wamid, status, recipient, callback string, at time.Time, code int) string {
	t.Helper()
	s := map[string]any{"id": wamid, "status": status, "timestamp": strconv.FormatInt(at.Unix(), 10), "recipient_id": recipient}
	if callback != "" {
		s["biz_opaque_callback_data"] = callback
	}
	if code != 0 {
		s["errors"] = []any{map[string]any{"code": code, "title": "Title " + strconv.Itoa(code)}}
	}
	b, err := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": "1", "changes": []any{map[string]any{"field": "messages", "value": map[string]any{
			"messaging_product": "whatsapp", "metadata": map[string]any{"display_phone_number": "15550001111", "phone_number_id": "pn-1"},
			"statuses": []any{s}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// webhook import applies saved bodies once: delivery figures appear in
// show, status and export; an unknown row is settled by its callback
// data; a second import changes nothing; a bad line stores nothing.
func TestWebhookImport(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	at := showT0.Add(2 * time.Minute)
	lines := []string{
		statusLine(t, "wamid.HBgL02", "read", "4915100000000", "", at.Add(time.Minute), 0),
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "delivered", "4915100000001", "", at, 0),
		statusLine(t, "wamid.HBgL04", "failed", "4915100000002", "", at, 131049),
		// line 9 is unknown (message 8): its answer was lost.
		statusLine(t, "wamid.lost09", "delivered", "4915100000007", "wasend:c1:m8", at, 0),
		statusLine(t, "wamid.someone-else", "sent", "4915199999999", "", at, 0),
		"", // a blank line at the end is skipped
	}
	file := statusFile(t, lines...)
	var rep applyJSON
	if err := json.Unmarshal([]byte(c.ok("webhook", "import", file, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Bodies != 6 || rep.Statuses != 6 || rep.Unmatched != 1 || rep.Settled != 1 || rep.Rescheduled != 1 || rep.Duplicates != 0 {
		t.Errorf("first import = %+v", rep)
	}
	if err := json.Unmarshal([]byte(c.ok("webhook", "import", file, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	// The status of a message wasend never sent stays unmatched, not a
	// duplicate: it waits for its wamid to be recorded.
	if rep.Duplicates != 5 || rep.Unmatched != 1 || rep.Settled != 0 || rep.Rescheduled != 0 {
		t.Errorf("second import = %+v, want 5 duplicates, 1 unmatched and no change", rep)
	}

	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	d := show.Delivery
	// Sent: lines 2, 3, 8 and 9 (settled); line 4 was rescheduled.
	if d == nil || d.Sent != 4 || d.Delivered != 3 || d.Read != 1 || d.DeliveredRate != 0.75 {
		t.Fatalf("show delivery = %+v", d)
	}
	if show.Counts["unknown"] != 0 || show.Counts["pending"] != 2 {
		t.Errorf("counts = %v, want the unknown row sent and line 4 pending again", show.Counts)
	}
	st := c.status()
	if st.Campaigns[0].Delivery == nil || st.Campaigns[0].Delivery.Delivered != 3 {
		t.Errorf("status delivery = %+v", st.Campaigns[0].Delivery)
	}
	var delivered int
	for _, a := range st.Accounts {
		if a.Delivery != nil {
			delivered += a.Delivery.Delivered
		}
	}
	if delivered != 3 {
		t.Errorf("accounts' delivered add up to %d, want 3", delivered)
	}
	rows := parseExport(t, c.ok("campaign", "export", "1", "--state", "sent"))
	got := map[string]string{}
	for _, r := range rows {
		got[r["line"]] = r["delivery"] + "|" + r["delivered_at"] + "|" + r["read_at"]
	}
	if got["2"] != "read|2026-11-30T14:02:00Z|2026-11-30T14:03:00Z" || got["9"] != "delivered|2026-11-30T14:02:00Z|" || got["8"] != "||" {
		t.Errorf("export delivery = %v", got)
	}

	// A resend to those who never got it: line 8 only (sent, no webhook).
	out := c.ok("campaign", "retry", "1", "--undelivered", "--older-than", "1h")
	if !strings.Contains(out, "1 sent but undelivered message(s) queued again") {
		t.Errorf("retry --undelivered: %s", out)
	}
	c.usage("campaign", "retry", "1", "--older-than", "1h")

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(lines[0]+"\n{not json\n"), 0o600)
	if _, _, err := c.run("webhook", "import", bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2: not a JSON body") {
		t.Errorf("bad file: %v", err)
	}
}

func TestWebhookServeNeedsSecrets(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	if _, _, err := c.run("webhook", "serve", "--addr", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "WASEND_APP_SECRET is not set") {
		t.Errorf("serve without secret: %v", err)
	}
	c.env["WASEND_APP_SECRET"] = "s3cret-value"
	_, _, err := c.run("webhook", "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "WASEND_VERIFY_TOKEN is not set") || strings.Contains(err.Error(), "s3cret-value") {
		t.Errorf("serve without verify token: %v", err)
	}
}
