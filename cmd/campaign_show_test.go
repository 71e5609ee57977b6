package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/golden"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// goldenFile compares got with testdata/golden/name (-update rewrites it).
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("..", "testdata", "golden", name), got)
}

// showT0 is when the seeded campaign was imported; its requests follow one
// a second.
var showT0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

// seedCampaign builds, through the store and a fixed clock, campaign 1 of
// eleven recipients in every state a campaign can hold: sent, failed with
// two codes (one twice), throttled then sent, unknown, failed with an
// account-fatal error that drops its account, one in flight and one
// pending — then paused.
func seedCampaign(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	now := showT0
	st, err := store.Open(ctx, db, driver.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, a := range []campaign.Account{
		{Name: "main-01", PhoneNumberID: "1234567890", Tier: campaign.TierActive, TokenEnv: "WA_TOKEN_MAIN"},
		{Name: "fresh-02", PhoneNumberID: "2345678901", Tier: campaign.TierNew, TokenEnv: "WA_TOKEN_FRESH"},
	} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	im, err := st.Import(ctx, campaign.Campaign{
		Name: "spring.csv", Fingerprint: "fp-spring", Source: "testdata/spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "spring_sale", Lang: "en_US", Params: []string{"name", "code"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range 11 {
		p := fmt.Sprintf("+49151000000%02d", i)
		if _, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: "0151 000000" + p[len(p)-2:], Phone: p,
			Params: []string{fmt.Sprint("Name", i), "SPRING"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Skip(ctx, 13, "12345", "invalid number"); err != nil {
		t.Fatal(err)
	}
	c, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}

	outcome := func(line, attempt int) *campaign.Outcome {
		switch line {
		case 2, 3, 4:
			return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.HBgL%02d", line), Class: "ok"}
		case 5, 6:
			return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Class: "permanent",
				Error: fmt.Sprintf("131026 Message undeliverable: receiver of line %d is not on WhatsApp", line)}
		case 7:
			return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131050, Class: "permanent", Suppress: true,
				Error: "131050 Unable to deliver message: the user stopped marketing messages"}
		case 8:
			if attempt < 3 {
				return &campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 130429, Class: "throttled",
					Error: "130429 Rate limit hit"}
			}
			return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.HBgL08", Class: "ok"}
		case 9:
			return &campaign.Outcome{Kind: campaign.OutcomeUnknown, Class: "ambiguous", Error: "timeout after the request was sent"}
		case 10:
			return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 190, Class: "account-fatal", DropAccount: true,
				Error: "190 Error validating access token: Session has expired"}
		}
		return nil // line 11 stays in flight
	}
	for i := 0; ; i++ {
		now = showT0.Add(time.Minute + time.Duration(i)*time.Second)
		cl, err := storetest.One(claim.New(st).ClaimN(ctx, c.ID, "runner-1", now, 1))
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if o := outcome(cl.Message.Line, cl.Message.Attempts); o != nil {
			if err := st.RecordAll(ctx, "runner-1", []campaign.Result{{Claim: cl, Outcome: *o, At: now.Add(400 * time.Millisecond)}}); err != nil {
				t.Fatal(err)
			}
		}
		if cl.Message.Line == 11 {
			break // line 11 in flight, line 12 left pending
		}
		if i > 20 {
			t.Fatal("seed: too many claims")
		}
	}
	if err := storetest.SetCampaignState(ctx, st.Path(), c.ID, campaign.CampaignPaused, "too many permanent failures (3 of the last 10 attempts)"); err != nil {
		t.Fatal(err)
	}
}

func TestCampaignShowGolden(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(time.Hour)
	for _, tt := range []struct {
		name string
		tty  bool
		args []string
	}{
		{"campaign_show_tty.golden", true, nil},
		{"campaign_show_piped.golden", false, nil},
		{"campaign_show_json.golden", false, []string{"--json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty = t, tt.tty
			out, errOut, err := c.run(append([]string{"campaign", "show", "1"}, tt.args...)...)
			if err != nil || errOut != "" {
				t.Fatalf("campaign show: %v\n%s", err, errOut)
			}
			goldenFile(t, tt.name, out)
		})
	}
}

// TestCampaignShowJSONAgrees checks the JSON against what was seeded, so
// the golden files are known to hold the right numbers.
func TestCampaignShowJSONAgrees(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	var got showJSON
	dec := json.NewDecoder(strings.NewReader(c.ok("campaign", "show", "1", "--json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	wantCounts := map[string]int{"pending": 1, "sending": 1, "sent": 4, "failed": 4, "unknown": 1}
	for s, n := range wantCounts {
		if got.Counts[s] != n {
			t.Errorf("count %s = %d, want %d", s, got.Counts[s], n)
		}
	}
	if got.State != "paused" || got.PauseReason == "" || got.Imported != 11 || got.Skipped != 1 {
		t.Errorf("settings = %+v", got)
	}
	if len(got.Errors) != 3 || got.Errors[0] != (errorGroupJSON{131026, 2, "131026 Message undeliverable: receiver of line 5 is not on WhatsApp"}) {
		t.Errorf("errors = %+v", got.Errors)
	}
	var attempts, throttled, sent, failed, unknown int
	for _, a := range got.Accounts {
		attempts += a.Attempts
		throttled += a.Throttled
		sent += a.Sent
		failed += a.Failed
		unknown += a.Unknown
	}
	if attempts != 12 || throttled != 2 || sent != 4 || failed != 4 || unknown != 1 {
		t.Errorf("accounts sum to attempts %d throttled %d sent %d failed %d unknown %d; want 12 2 4 4 1: %+v",
			attempts, throttled, sent, failed, unknown, got.Accounts)
	}
	if got.Timing.FirstAttempt == nil || !got.Timing.FirstAttempt.Equal(showT0.Add(time.Minute)) ||
		got.Timing.LastAttempt == nil || !got.Timing.LastAttempt.Equal(showT0.Add(time.Minute+11*time.Second)) {
		t.Errorf("timing = %+v", got.Timing)
	}
	if len(got.Dropped) != 1 || got.Dropped[0].ErrorCode != 190 {
		t.Errorf("dropped = %+v", got.Dropped)
	}
}

func TestCampaignShowErrors(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	c.usage("campaign", "show", "x")
	c.usage("campaign", "show")
	_, _, err := c.run("campaign", "show", "7")
	if !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("show of a missing campaign: %v, want ErrNotFound", err)
	}
}

// The delivery block of campaign show fits a terminal of 80 columns (and
// of 120) one figure a line; its resend hint is a command that works.
func TestCampaignShowDeliveryFits(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	at := showT0.Add(2 * time.Minute)
	lines := []string{
		statusLine(t, "wamid.HBgL02", "read", "4915100000000", "", at.Add(time.Minute), 0),
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "delivered", "4915100000001", "", at, 0),
		statusLine(t, "wamid.HBgL04", "failed", "4915100000002", "", at, 131026),
	}
	c.ok("webhook", "import", statusFile(t, lines...))
	c.tty = true
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			c.t, c.width = t, width
			out, errOut, err := c.run("campaign", "show", "1")
			if err != nil || errOut != "" {
				t.Fatalf("campaign show: %v\n%s", err, errOut)
			}
			out = out[strings.Index(out, "\nDelivery"):]
			out = strings.ReplaceAll(out, c.db, "DB")
			goldenFile(t, fmt.Sprintf("campaign_show_delivery_%d.golden", width), out)
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > width {
					t.Errorf("line of %d columns at a width of %d: %q", n, width, l)
				}
			}
		})
	}
}

// TestCampaignShowPutBack: a 131049 failed status puts its row back to be
// sent a day later, a 131026 one leaves its row failed. Show names both:
// the pending rows by the code that put them back (with the next try), and
// every failed status that arrived with what became of its row — not
// "Failed: 1 after send" alone, as if one failure had come.
func TestCampaignShowPutBack(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(2 * time.Hour)
	at := showT0.Add(2 * time.Minute)
	c.ok("webhook", "import", statusFile(t,
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "failed", "4915100000001", "", at, 131049),
		statusLine(t, "wamid.HBgL04", "failed", "4915100000002", "", at, 131026),
	))

	var got showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.PutBack) != 1 || got.PutBack[0].Code != 131049 || got.PutBack[0].Count != 1 ||
		got.PutBack[0].NextTry == nil || got.PutBack[0].NextTry.Before(c.now.Add(20*time.Hour)) {
		t.Errorf("put_back = %+v, want one row of 131049 due about a day later", got.PutBack)
	}
	want := []failedStatusJSON{{Code: 131026, Count: 1, KeptFailed: 1}, {Code: 131049, Count: 1, PutBack: 1}}
	if fmt.Sprint(got.FailedStatuses) != fmt.Sprint(want) {
		t.Errorf("failed_statuses = %+v, want %+v", got.FailedStatuses, want)
	}
	if got.Delivery == nil || got.Delivery.FailedAfterSend != 1 {
		t.Errorf("delivery = %+v, want 1 failed after send", got.Delivery)
	}

	c.tty = true
	out := c.ok("campaign", "show", "1")
	for _, w := range []string{
		"Put back to send again, by error code (pending)",
		"131049  1      2026-12-01 16:00:00 UTC",
		"Failed:        1 after send: rows a failed status left failed",
		"Failed status: 2 arrived (131026 × 1, 131049 × 1)",
		"Of them:       1 left failed, 1 put back to send again, 0 sent again",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("campaign show: no %q in\n%s", w, out)
		}
	}
	c.tty = false
	piped := c.ok("campaign", "show", "1")
	for _, w := range []string{"put_back\t131049\t1\t2026-12-01T16:00:00Z\t", "failed_status\t131049\t1\t0\t1\t0\n", "failed_status\t131026\t1\t1\t0\t0\n"} {
		if !strings.Contains(piped, w) {
			t.Errorf("campaign show piped: no %q in\n%s", w, piped)
		}
	}
}
