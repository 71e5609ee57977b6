package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/webhook"
)

// TestServiceWindow: a sandbox that refuses text messages outside the
// customer service window (131047), as Meta does, and recipients who
// wrote at various times, told to wasend by signed webhook posts. A --text
// campaign sends to those who wrote within 24 h only — the sandbox never
// refuses one — and skips the others at import with the reason; a window
// that closes between the import and the send skips the row at its claim,
// unsent; --ignore-window sends to everyone, and the sandbox's refusals
// fail those rows with 131047 after one attempt (permanent).
func TestServiceWindow(t *testing.T) {
	const first = 4915112700000
	w := newWorld(t, sandbox.Options{PairInterval: -1, ServiceWindow: true})
	w.fastTiers("50", "5")
	w.addAccounts(account{"main", "100000000000070", "active"})
	file := w.WriteCSV("people.csv", first, 6)
	phone := func(i int) string { return "+" + strconv.Itoa(first+i) }

	addr := freeAddr(t)
	recv := w.startReceiver(addr)
	now := time.Now()
	// 0 and 1 wrote an hour ago, 2 a day and an hour ago, 3 a moment
	// short of 24 h ago (its window closes in a few seconds); 4 and 5
	// never wrote.
	wrote := map[int]time.Time{0: now.Add(-time.Hour), 1: now.Add(-time.Hour), 2: now.Add(-25 * time.Hour),
		3: now.Add(-24*time.Hour + 4*time.Second)}
	var msgs []string
	for i, at := range wrote {
		msgs = append(msgs, fmt.Sprintf(`{"from":"%s","id":"wamid.in.%d","timestamp":"%d","type":"text","text":{"body":"hello"}}`,
			strings.TrimPrefix(phone(i), "+"), i, at.Unix()))
		w.api.NoteInbound(phone(i), "100000000000070", time.Unix(at.Unix(), 0))
	}
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550000070","phone_number_id":"100000000000070"},
		"messages":[` + strings.Join(msgs, ",") + `]}}]}]}`)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
	req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte(e2eSecret), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post: %s", resp.Status)
	}
	w.WaitFor(10*time.Second, "the inbound messages stored", func() bool {
		n := 0
		w.Query(`SELECT count(*) FROM inbound_messages`, func(rs *sql.Rows) error { return rs.Scan(&n) })
		return n == len(wrote)
	})
	recv.Signal(t, syscall.SIGTERM)
	recv.Wait(t)

	// The import keeps 0, 1 and 3 (open windows) and says why the others
	// are skipped; 3's window closes before it is sent.
	w.OK("campaign", "import", file, "--text", "Hi {{name}}")
	skipped := w.OK("campaign", "skipped", "1").Stdout
	for _, want := range []string{
		phone(2) + "\tno customer service window: last message from them " + time.Unix(wrote[2].Unix(), 0).UTC().Format(time.RFC3339),
		phone(4) + "\tno customer service window: never wrote",
		phone(5) + "\tno customer service window: never wrote",
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("campaign skipped 1 does not say %q:\n%s", want, skipped)
		}
	}
	w.WaitFor(10*time.Second, "the window of recipient 3 to close", func() bool {
		return time.Since(wrote[3]) > 24*time.Hour+time.Second
	})
	w.OK("campaign", "run", file, "--text", "Hi {{name}}")
	byPhone := map[string]string{}
	for _, r := range w.Rows() {
		if r.CampaignID == 1 {
			byPhone[r.Phone] = r.State + " " + r.ErrorMessage
		}
	}
	if len(byPhone) != 3 || byPhone[phone(0)] != "sent " || byPhone[phone(1)] != "sent " ||
		!strings.HasPrefix(byPhone[phone(3)], "failed no customer service window: last message from them") {
		t.Errorf("campaign 1's rows: %q; want 0 and 1 sent, 3 skipped at its claim", byPhone)
	}
	recs := w.api.Records()
	for _, r := range recs {
		if to := "+" + strings.TrimPrefix(r.To, "+"); r.Code == 131047 || (to != phone(0) && to != phone(1)) {
			t.Errorf("the sandbox was sent %+v: wasend sent a text outside the window", r)
		}
	}
	if len(recs) != 2 {
		t.Errorf("%d requests, want 2", len(recs))
	}

	// --ignore-window: everyone, and Meta's refusals are permanent.
	w.OK("campaign", "run", file, "--text", "Hello {{name}}", "--ignore-window", "--error-pause-ratio", "0")
	sent, refused := 0, 0
	for _, r := range w.Rows() {
		switch {
		case r.CampaignID != 2:
		case r.State == "sent":
			sent++
		case r.State == "failed" && r.ErrorCode == 131047 && r.Attempts == 1:
			refused++
		default:
			t.Errorf("campaign 2's row %+v: want sent, or failed 131047 after one attempt", r)
		}
	}
	if sent != 2 || refused != 4 {
		t.Errorf("--ignore-window: %d sent, %d refused 131047; want 2 and 4", sent, refused)
	}
	w.CheckCounts("after the runs")
}
