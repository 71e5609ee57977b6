package e2e

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// Flags that keep the failure model's waits short.
var fastFailureFlags = []string{"--cooldown", "100ms", "--backoff-base", "20ms", "--backoff-max", "200ms"}

func templateRun(csv, template string, extra ...string) []string {
	args := []string{"campaign", "run", csv, "--template", template, "--lang", "en_US", "--params", "name"}
	args = append(args, fastFailureFlags...)
	return append(args, extra...)
}

// TestFaultStorm runs a campaign through throttling, server errors, lost
// answers, an account whose token dies part-way, a recipient that always
// errors transiently and one that can never be reached, and checks every
// part of the failure model against the server's record and the database.
func TestFaultStorm(t *testing.T) {
	const (
		n         = 300
		first     = 4915112380000
		doomed    = "100000000000033"
		fatalAt   = 20
		transient = "+4915112380007" // always 131000: gives up
		permanent = "+4915112380011" // always 131026
		workers   = 8
	)
	seed := testSeed(t)
	w := newWorld(t, sandbox.Options{
		PairInterval: -1,
		Throughput:   -1,
		Faults: sandbox.Faults{
			Seed: int64(seed), Throttle: 0.10, ServerError: 0.05, Drop: 0.02,
			FatalAccounts: map[string]sandbox.FatalAccount{doomed: {Code: 190, After: fatalAt}},
			FailNumbers:   map[string]int{transient: 131000, permanent: 131026},
		},
	})
	w.fastTiers("400", "10")
	w.addAccounts(
		account{"one", "100000000000031", "active"},
		account{"two", "100000000000032", "active"},
		account{"doomed", doomed, "active"},
	)
	csv := w.WriteCSV("storm.csv", first, n)
	start := time.Now()
	r := w.Run(templateRun(csv, "spring_sale", "--max-attempts", "3", "--workers", fmt.Sprint(workers))...)
	t.Logf("campaign run: exit %d in %v", r.Code, time.Since(start).Round(time.Millisecond))
	if r.Code != 0 {
		t.Fatalf("campaign run under a fault storm: want exit 0\n%s", r)
	}

	recs := w.api.Records()
	rows := w.Rows()
	msgs := w.Rows()
	codes := map[int]int{}
	for _, rec := range recs {
		codes[rec.Code]++
	}
	t.Logf("server: %d requests, codes %v; rows %v", len(recs), codes, testproc.States(rows))
	if codes[130429] == 0 || codes[131000] == 0 || codes[190] == 0 {
		t.Fatalf("the storm lacked throttles, server errors or 190s (codes %v); the test proved little", codes)
	}

	// Every row ended: sent, failed with a code, or unknown; nobody got
	// the message twice; wasend's story matches the server's.
	if len(rows) != n {
		t.Fatalf("campaign holds %d rows, want %d", len(rows), n)
	}
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
	for _, m := range msgs {
		if m.State == "failed" && m.ErrorCode == 0 {
			t.Errorf("%s: failed without an error code (%q)", m.Phone, m.ErrorMessage)
		}
	}
	camps := w.status()
	if len(camps) != 1 || camps[0].State != "finished" {
		t.Fatalf("status: want one finished campaign, got %+v", camps)
	}
	c := camps[0]
	if c.Pending+c.Sending != 0 || c.Sent+c.Failed+c.Unknown != n {
		t.Errorf("status counts %+v do not add up to %d ended rows", c, n)
	}

	// The dying account: dropped for this campaign with its code, no token
	// taken on it after wasend recorded the 190, nothing accepted from it after.
	if d := droppedNames(c); len(d) != 1 || !d["doomed"] {
		t.Errorf("dropped_accounts %+v, want exactly doomed", c.DroppedAccounts)
	} else if c.DroppedAccounts[0].ErrorCode != 190 {
		t.Errorf("doomed dropped with code %d, want 190", c.DroppedAccounts[0].ErrorCode)
	}
	first190 := slices.IndexFunc(recs, func(r sandbox.Record) bool { return r.PhoneNumberID == doomed && r.Code == 190 })
	if first190 < 0 {
		t.Fatal("doomed never answered 190")
	}
	// Requests already in flight when the first 190 came back still reach
	// the server (and get 190 too); what must not happen is a claim on the
	// account once wasend recorded the 190 (lateClaims below).
	claimOf, unsent := matchClaims(t, recs, w.Claims())
	if len(unsent) > 0 {
		t.Errorf("%d tokens taken for requests that never reached the server, e.g. %+v", len(unsent), unsent[0])
	}
	var after []string
	claimedAfterAnswer := 0
	for i, rec := range recs[first190+1:] {
		if rec.PhoneNumberID != doomed {
			continue
		}
		cl := claimOf[first190+1+i]
		after = append(after, fmt.Sprintf("%s code %d at +%v, claimed at %+v", rec.CallbackData, rec.Code,
			rec.At.Sub(recs[first190].At), cl.At.Sub(recs[first190].At)))
		if !cl.At.Before(recs[first190].At) {
			claimedAfterAnswer++
		}
	}
	// Known gap (reported): the engine learns of the 190 only when the
	// recorder commits it, so a claim in the few milliseconds between the
	// answer and the commit still picks the account.
	t.Logf("doomed: %d request(s) after its first 190, %d of them claimed after that answer:\n%s",
		len(after), claimedAfterAnswer, strings.Join(after, "\n"))
	var lateClaims int
	w.Query(`SELECT count(*) FROM attempts t JOIN accounts a ON a.id = t.account_id
		JOIN campaign_accounts c ON c.account_id = a.id
		WHERE a.phone_number_id = ? AND t.claimed_at > c.at AND coalesce(t.class, '') <> 'not-sent'`, func(rs *sql.Rows) error { return rs.Scan(&lateClaims) }, doomed)
	if lateClaims > 0 {
		t.Errorf("%d token(s) claimed on doomed after it was dropped from the campaign", lateClaims)
	}
	for _, rec := range recs {
		if rec.PhoneNumberID == doomed && testproc.AcceptedOutcome(rec.Outcome) && rec.At.After(recs[first190].At) {
			t.Errorf("doomed had a message accepted after its 190: %+v", rec)
		}
	}

	// Only transient errors spend the retry budget: a throttle, a 190 or a
	// lost answer never does. The last transient answer of a row that gave
	// up is not counted, since it failed the row instead.
	classes := w.AttemptClasses()
	onlyThrottled := 0
	for _, m := range msgs {
		cl := classes[m.ID]
		if len(cl) != m.Attempts {
			t.Errorf("%s: %d attempts logged, messages.attempts %d", m.Phone, len(cl), m.Attempts)
		}
		want := 0
		throttled, other := 0, 0
		for _, class := range cl {
			switch class {
			case "transient":
				want++
				other++
			case "throttled":
				throttled++
			case "ok", "ambiguous":
			default:
				other++
			}
		}
		if m.State == "failed" && strings.HasPrefix(m.ErrorMessage, "gave up after") {
			want--
		}
		if m.Retries != want {
			t.Errorf("%s (%s): retries %d, want %d from its attempts %v", m.Phone, m.State, m.Retries, want, cl)
		}
		if throttled > 0 && other == 0 {
			onlyThrottled++
			if m.Retries != 0 {
				t.Errorf("%s: only throttled, yet retries %d", m.Phone, m.Retries)
			}
		}
	}
	if onlyThrottled == 0 {
		t.Error("no row was throttled without other errors; the budget check proved nothing")
	}
	t.Logf("%d rows were throttled and had no other error", onlyThrottled)

	// The dead-letter list is exactly the failed rows.
	failedDB := map[string]int{}
	for _, m := range msgs {
		if m.State == "failed" {
			failedDB[m.Phone] = m.ErrorCode
		}
	}
	list := w.failed("1")
	failedList := map[string]int{}
	for _, f := range list {
		failedList[f.Phone] = f.ErrorCode
		switch f.Phone {
		case transient:
			if f.ErrorCode != 131000 || !f.GaveUp || !strings.HasPrefix(f.Reason, "gave up after 3 attempts") {
				t.Errorf("%s: want 131000, gave up after 3 attempts; got %+v", f.Phone, f)
			}
		case permanent:
			if f.ErrorCode != 131026 || f.GaveUp {
				t.Errorf("%s: want 131026 at once, not gave up; got %+v", f.Phone, f)
			}
		}
		if f.Account == "" || f.LastAttempt.IsZero() || f.Attempts < 1 {
			t.Errorf("%s: dead-letter entry lacks account, time or attempts: %+v", f.Phone, f)
		}
	}
	if fmt.Sprint(failedList) != fmt.Sprint(failedDB) {
		t.Errorf("campaign failed 1 --json lists %v, the failed rows are %v", failedList, failedDB)
	}
	if _, ok := failedDB[transient]; !ok {
		t.Errorf("%s, always answered 131000, did not fail", transient)
	}
	if _, ok := failedDB[permanent]; !ok {
		t.Errorf("%s, always answered 131026, did not fail", permanent)
	}

	if c.ThrottleRate <= 0 || c.AvgAttempts <= 1 {
		t.Errorf("status: throttle_rate %v, avg_attempts %v; want > 0 and > 1", c.ThrottleRate, c.AvgAttempts)
	}
	t.Logf("status: throttle_rate %.3f, avg_attempts %.3f, failed %d, unknown %d", c.ThrottleRate, c.AvgAttempts, c.Failed, c.Unknown)
}

// TestTemplatePausesCampaign: a template the API does not know pauses the
// campaign (exit 4) without failing any row; once the template exists,
// `campaign resume` sends everything.
func TestTemplatePausesCampaign(t *testing.T) {
	const n = 40
	w := newSwapWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{BadTemplates: []string{"gone_tpl"}}})
	w.fastTiers("50", "5")
	w.addAccounts(account{"one", "100000000000041", "active"}, account{"two", "100000000000042", "active"})
	csv := w.WriteCSV("tpl.csv", 4915112400000, n)

	r := w.Run(templateRun(csv, "gone_tpl")...)
	if r.Code != 4 {
		t.Fatalf("run with an unknown template: want exit 4 (paused)\n%s", r)
	}
	if !strings.Contains(r.Stderr, "paused") || !strings.Contains(r.Stderr, "campaign resume 1") {
		t.Errorf("stderr should say the campaign paused and how to resume it\n%s", r.Stderr)
	}
	if got := testproc.States(w.Rows()); got["pending"] != n {
		t.Errorf("after the pause: rows %v, want all %d pending", got, n)
	}
	recs := w.api.Records()
	for _, rec := range recs {
		if rec.Code != 132001 {
			t.Errorf("request to %s answered %d (%s), want 132001", rec.To, rec.Code, rec.Outcome)
		}
	}
	if len(recs) == 0 || len(recs) >= n/2 {
		t.Errorf("%d requests before the pause; want a few, not most of the %d rows", len(recs), n)
	}
	c := w.status()
	if len(c) != 1 || c[0].State != "paused" || !strings.Contains(c[0].PauseReason, "132001") {
		t.Fatalf("status: want campaign 1 paused with a reason naming 132001, got %+v", c)
	}
	if len(c[0].DroppedAccounts) > 0 {
		t.Errorf("a template error dropped accounts: %+v", c[0].DroppedAccounts)
	}
	if f := w.failed("1"); len(f) > 0 {
		t.Errorf("a template error failed rows: %+v", f)
	}

	// The template is approved now.
	w.swap(sandbox.Options{PairInterval: -1})
	resume := append([]string{"campaign", "resume", "1"}, fastFailureFlags...)
	r = w.OK(resume...)
	rows := w.Rows()
	if got := testproc.States(rows); got["sent"] != n {
		t.Errorf("after resume: rows %v, want all %d sent\n%s", got, n, r)
	}
	recs = w.api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
	if c := w.status(); c[0].State != "finished" || c[0].PauseReason != "" {
		t.Errorf("after resume: campaign %+v, want finished without a pause reason", c[0])
	}
}

// TestAllAccountsFatal: when every account answers 190 the campaign pauses
// with exit 5, every row still pending and every account dropped.
func TestAllAccountsFatal(t *testing.T) {
	const n = 20
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{
		FatalAccounts: map[string]sandbox.FatalAccount{
			"100000000000051": {Code: 190},
			"100000000000052": {Code: 190},
		},
	}})
	w.fastTiers("50", "5")
	w.addAccounts(account{"one", "100000000000051", "active"}, account{"two", "100000000000052", "active"})
	csv := w.WriteCSV("fatal.csv", 4915112410000, n)

	r := w.Run(templateRun(csv, "spring_sale")...)
	if r.Code != 5 {
		t.Fatalf("every account answering 190: want exit 5\n%s", r)
	}
	if got := testproc.States(w.Rows()); got["pending"] != n {
		t.Errorf("rows %v, want all %d pending", got, n)
	}
	if f := w.failed("1"); len(f) > 0 {
		t.Errorf("account errors failed rows: %+v", f)
	}
	for _, rec := range w.api.Records() {
		if testproc.AcceptedOutcome(rec.Outcome) {
			t.Errorf("the server accepted a message: %+v", rec)
		}
	}
	c := w.status()
	if len(c) != 1 {
		t.Fatalf("status: %+v", c)
	}
	if d := droppedNames(c[0]); !d["one"] || !d["two"] {
		t.Errorf("dropped_accounts %+v, want one and two", c[0].DroppedAccounts)
	}
	for _, d := range c[0].DroppedAccounts {
		if d.ErrorCode != 190 {
			t.Errorf("account %s dropped with code %d, want 190", d.Account, d.ErrorCode)
		}
	}
	if c[0].State != "paused" || c[0].PauseReason == "" {
		t.Errorf("campaign %+v, want paused with a reason", c[0])
	}
}

// TestOptOutSuppresses: 131050 (the person stopped marketing messages)
// fails the row and adds the number to the suppression list, so a later
// campaign skips it at import.
func TestOptOutSuppresses(t *testing.T) {
	const optedOut = "+4915112420003"
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{
		FailNumbers: map[string]int{optedOut: 131050},
	}})
	w.fastTiers("50", "5")
	w.addAccounts(account{"one", "100000000000061", "active"}, account{"two", "100000000000062", "active"})

	w.OK(templateRun(w.WriteCSV("first.csv", 4915112420000, 10), "spring_sale")...)
	for _, m := range w.Rows() {
		switch {
		case m.Phone == optedOut && (m.State != "failed" || m.ErrorCode != 131050):
			t.Errorf("%s: %s with code %d, want failed with 131050", m.Phone, m.State, m.ErrorCode)
		case m.Phone != optedOut && m.State != "sent":
			t.Errorf("%s: %s, want sent", m.Phone, m.State)
		}
	}
	if f := w.failed("1"); len(f) != 1 || f[0].Phone != optedOut || f[0].ErrorCode != 131050 {
		t.Errorf("campaign failed 1: %+v, want only %s with 131050", f, optedOut)
	}
	list := w.OK("suppress", "list", "--json")
	if !strings.Contains(list.Stdout, `"`+optedOut+`"`) {
		t.Fatalf("suppress list --json does not hold %s:\n%s", optedOut, list.Stdout)
	}

	before := len(w.api.Records())
	// The same template to four of the same people minutes later is
	// deliberate here (--again: the 24 h rule would skip them); the
	// suppression list applies all the same.
	r := w.OK(append(templateRun(w.WriteCSV("second.csv", 4915112420002, 5), "spring_sale"), "--again")...)
	if !strings.Contains(r.Stderr, "suppressed") {
		t.Errorf("second import does not report the suppressed number\n%s", r.Stderr)
	}
	c := w.status()
	if len(c) != 2 || c[1].Skipped != 1 || c[1].Total != 4 || c[1].Sent != 4 {
		t.Errorf("second campaign: %+v, want 4 sent and 1 skipped", c[len(c)-1])
	}
	var reasons []string
	w.Query(`SELECT input, reason FROM skipped WHERE campaign_id = 2`, func(rs *sql.Rows) error {
		var in, why string
		err := rs.Scan(&in, &why)
		reasons = append(reasons, in+": "+why)
		return err
	})
	if len(reasons) != 1 || !strings.Contains(reasons[0], "4915112420003") || !strings.Contains(reasons[0], "suppressed") {
		t.Errorf("skipped rows of campaign 2: %q, want the opted-out number as suppressed", reasons)
	}
	for _, rec := range w.api.Records()[before:] {
		if rec.To == optedOut || rec.To == strings.TrimPrefix(optedOut, "+") {
			t.Errorf("second campaign messaged the opted-out number: %+v", rec)
		}
	}
}

// TestErrorRatioPauses: a list where many numbers fail permanently pauses
// the campaign once more than 20% of the recent attempts failed so.
func TestErrorRatioPauses(t *testing.T) {
	const (
		n     = 40
		first = 4915112430000
	)
	bad := map[string]int{}
	for i := range n {
		if i%8 == 0 || i%8 == 3 || i%8 == 5 {
			bad[fmt.Sprintf("+%d", first+i)] = 131026
		}
	}
	if len(bad) != 15 {
		t.Fatalf("%d bad numbers, want 15", len(bad))
	}
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{FailNumbers: bad}})
	w.fastTiers("50", "5")
	w.addAccounts(account{"one", "100000000000071", "active"}, account{"two", "100000000000072", "active"})

	r := w.Run(templateRun(w.WriteCSV("ratio.csv", first, n), "spring_sale")...)
	if r.Code != 4 {
		t.Fatalf("15 of 40 numbers failing permanently: want exit 4 (paused)\n%s", r)
	}
	if !strings.Contains(r.Stderr, "failed permanently") {
		t.Errorf("stderr does not say why the campaign paused\n%s", r.Stderr)
	}
	c := w.status()
	if len(c) != 1 || c[0].State != "paused" || !strings.Contains(c[0].PauseReason, "failed permanently") {
		t.Fatalf("status: want campaign paused for failing permanently, got %+v", c)
	}
	for _, m := range w.Rows() {
		_, isBad := bad[m.Phone]
		switch {
		case m.State == "failed" && (!isBad || m.ErrorCode != 131026):
			t.Errorf("%s: failed with %d (%q)", m.Phone, m.ErrorCode, m.ErrorMessage)
		case m.State == "sent" && isBad:
			t.Errorf("%s: sent although the server always refuses it", m.Phone)
		case m.State == "sending" || m.State == "unknown":
			t.Errorf("%s: %s after the pause", m.Phone, m.State)
		}
	}
	t.Logf("paused: %s; rows %v", c[0].PauseReason, testproc.States(w.Rows()))
}
