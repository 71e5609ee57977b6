package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/webhook"
)

// TestSuppressedOnOneHostNotSentByAnother: two hosts (two databases) and
// one Redis. Host B sends a list with --limits; while it runs, host A
// suppresses the end of the list with --limits. The sandbox's record shows
// B never messaged those numbers, and B's rows for them end failed as
// suppressed. A number suppressed through A before B started is skipped
// by B's import, though B's own database never had it.
func TestSuppressedOnOneHostNotSentByAnother(t *testing.T) {
	const (
		n     = 40
		first = 4915112470000
		rate  = 5.0 // 8 s for the list: time for the sync to matter
	)
	srv := redistest.Start(t)
	limits := "--limits=" + srv.URL()
	hostB := newWorld(t, sandbox.Options{PairInterval: -1})
	hostA := worldAt(t, hostB.api, hostB.APIBase)
	hostB.addAccounts(account{"main", "100000000000047", "active"})
	hostB.OK("account", "set", "main", "--rate", fmt.Sprint(rate), "--burst", "1")

	early := fmt.Sprintf("+%d", first)
	hostA.OK("suppress", "add", early, "--reason", "replied STOP", limits)
	var late []string // the last quarter of the list, reached after about 6 s
	for i := n - n/4; i < n; i++ {
		late = append(late, fmt.Sprintf("+%d", first+int64(i)))
	}

	file := hostB.WriteCSV("list.csv", first, n)
	hostB.OK("quota", "reset", "--force", limits) // starts the shared limits' state
	run := hostB.Start("campaign", "run", file, "--template", "spring_sale", "--lang", "en_US", "--params", "name", limits)
	hostB.WaitFor(10*time.Second, "host B's first five sends", func() bool { return len(hostB.api.Records()) >= 5 })
	hostA.OK(append([]string{"suppress", "add", "--reason", "unsubscribed"}, append(late, limits)...)...)
	suppressedAt := time.Now()
	r := run.Wait(t)
	if r.Code != 0 {
		t.Fatalf("host B: campaign run: %s", r)
	}

	recs := hostB.api.Records()
	checkNoDuplicates(t, recs)
	sentTo := map[string]time.Time{}
	for _, rec := range recs {
		sentTo["+"+strings.TrimPrefix(rec.To, "+")] = rec.At
	}
	if at, ok := sentTo[early]; ok {
		t.Errorf("host B messaged %s at %s, suppressed on host A before it started", early, at)
	}
	for _, p := range late {
		if at, ok := sentTo[p]; ok {
			t.Errorf("host B messaged %s at %s; host A suppressed it at %s", p, at.Format("15:04:05.000"), suppressedAt.Format("15:04:05.000"))
		}
	}
	if len(recs) != n-1-len(late) {
		t.Errorf("host B sent %d messages, want %d (all but the %d suppressed)", len(recs), n-1-len(late), 1+len(late))
	}
	rows := hostB.Rows()
	if len(rows) != n-1 {
		t.Errorf("host B imported %d rows, want %d (the number suppressed before is skipped)", len(rows), n-1)
	}
	isLate := map[string]bool{}
	for _, p := range late {
		isLate[p] = true
	}
	for _, row := range rows {
		if isLate[row.Phone] && (row.State != string(campaign.Failed) || !strings.Contains(row.ErrorMessage, "unsubscribed")) {
			t.Errorf("host B's row %s: %s %q, want failed as suppressed (unsubscribed)", row.Phone, row.State, row.ErrorMessage)
		}
	}
	// B's own list now has what A listed.
	if out := hostB.OK("suppress", "list").Stdout; strings.Count(out, "unsubscribed") != len(late) || !strings.Contains(out, early) {
		t.Errorf("host B's own list:\n%s", out)
	}
	hostB.CheckCounts("after the run")
}

// TestSharedSuppressionAfterRedisOutage: Redis dies while host B sends
// with --limits and comes back empty. B says so once, keeps the numbers it
// had copied, and a number suppressed through host A after Redis is back
// is not messaged by B. (Sending itself waits meanwhile: the shared limits
// fail closed, and after Redis lost its data until `quota reset --force`.)
func TestSharedSuppressionAfterRedisOutage(t *testing.T) {
	const (
		n     = 60
		first = 4915112480000
		rate  = 5.0 // 12 s for the list
	)
	srv := redistest.Start(t)
	limits := "--limits=" + srv.URL()
	hostB := newWorld(t, sandbox.Options{PairInterval: -1})
	hostA := worldAt(t, hostB.api, hostB.APIBase)
	hostB.addAccounts(account{"main", "100000000000048", "active"})
	hostB.OK("account", "set", "main", "--rate", fmt.Sprint(rate), "--burst", "1")

	known := fmt.Sprintf("+%d", first+int64(n-1)) // suppressed before; B copies it at start
	hostA.OK("suppress", "add", known, "--reason", "replied STOP", limits)
	var late []string // suppressed after the outage; reached after about 9 s
	for i := n - n/4; i < n-1; i++ {
		late = append(late, fmt.Sprintf("+%d", first+int64(i)))
	}

	file := hostB.WriteCSV("list.csv", first, n)
	// The list is imported before the number is listed on B's own copy…
	hostB.OK("campaign", "import", file, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	hostB.OK("quota", "reset", "--force", limits) // starts the shared limits' state
	run := hostB.Start("campaign", "run", "--resume", "1", "--log-level", "info", limits)
	hostB.WaitFor(10*time.Second, "host B's first five sends", func() bool { return len(hostB.api.Records()) >= 5 })
	srv.Kill()
	hostB.WaitFor(10*time.Second, "host B waiting for the shared limits", func() bool {
		state, _ := hostB.statusState()
		return state == "waiting for shared limits"
	})
	sent := len(hostB.api.Records())
	time.Sleep(2 * time.Second) // an outage the copying of the list (every second) notices
	if n := len(hostB.api.Records()); n != sent {
		t.Errorf("host B sent %d messages while Redis was down", n-sent)
	}
	srv.Restart()
	hostA.OK(append([]string{"suppress", "add", "--reason", "unsubscribed"}, append(late, limits)...)...)
	// Redis came back empty: sending waits for the shared state to start.
	hostB.OK("quota", "reset", "--force", limits)
	r := run.Wait(t)
	if r.Code != 0 {
		t.Fatalf("host B: campaign run: %s", r)
	}
	if n := strings.Count(r.Stderr, "not updated"); n != 1 {
		t.Errorf("host B warned %d times about the outage, want once:\n%s", n, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "updated again") {
		t.Errorf("host B did not say the shared list was read again:\n%s", r.Stderr)
	}

	recs := hostB.api.Records()
	checkNoDuplicates(t, recs)
	sentTo := map[string]bool{}
	for _, rec := range recs {
		sentTo["+"+strings.TrimPrefix(rec.To, "+")] = true
	}
	// …so only the copy made when the run started keeps it from being sent.
	for _, p := range append(late, known) {
		if sentTo[p] {
			t.Errorf("host B messaged %s, suppressed through host A", p)
		}
	}
	if len(recs) != n-1-len(late) {
		t.Errorf("host B sent %d messages, want %d", len(recs), n-1-len(late))
	}
	hostB.CheckCounts("after the run")
}

// TestOptOutOnOneHostNotSentByAnother: host A's campaign gets 131050 (the
// person stopped marketing messages) for one number. Host B, started after
// A's run with its own database, never messages that number: A's run put
// it on the shared list (the sync loop, or the push at its end) and B's
// import copies it from there.
func TestOptOutOnOneHostNotSentByAnother(t *testing.T) {
	const (
		n     = 10
		first = 4915112490000
	)
	optedOut := fmt.Sprintf("+%d", first+3)
	srv := redistest.Start(t)
	limits := "--limits=" + srv.URL()
	hostA := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{
		FailNumbers: map[string]int{optedOut: 131050},
	}})
	hostB := worldAt(t, hostA.api, hostA.APIBase)
	for _, w := range []*world{hostA, hostB} {
		w.fastTiers("50", "5")
		w.addAccounts(account{"main", "100000000000049", "active"})
	}
	hostA.OK("quota", "reset", "--force", limits)
	hostA.OK(templateRun(hostA.WriteCSV("a.csv", first, n), "spring_sale", limits)...)
	if out := hostA.OK("suppress", "list", "--limits", srv.URL()).Stdout; !strings.Contains(out, optedOut) {
		t.Fatalf("the shared list after host A's run does not hold %s:\n%s", optedOut, out)
	}

	// B's list: the opted-out number among others A never had.
	lines := []string{"phone,name"}
	for i := range 5 {
		lines = append(lines, fmt.Sprintf("+%d,Person %d", first+100+int64(i), i))
	}
	lines = append(lines, optedOut+",Opted Out")
	fileB := filepath.Join(hostB.Dir, "b.csv")
	if err := os.WriteFile(fileB, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostB.OK(templateRun(fileB, "spring_sale", limits)...)

	recs := hostA.api.Records()
	checkNoDuplicates(t, recs)
	toOptedOut := 0
	for _, rec := range recs {
		if "+"+strings.TrimPrefix(rec.To, "+") == optedOut {
			toOptedOut++
		}
	}
	if toOptedOut != 1 {
		t.Errorf("%s was asked %d times, want once (host A's request that got 131050)", optedOut, toOptedOut)
	}
	if len(recs) != n+5 {
		t.Errorf("the sandbox saw %d requests, want %d (A's %d and B's 5)", len(recs), n+5, n)
	}
	for _, row := range hostB.Rows() {
		if row.Phone == optedOut {
			t.Errorf("host B imported %s as %s; want it skipped as suppressed", optedOut, row.State)
		}
	}
	if out := hostB.OK("suppress", "list").Stdout; !strings.Contains(out, optedOut) || !strings.Contains(out, "131050") {
		t.Errorf("host B's own list does not hold %s with its reason:\n%s", optedOut, out)
	}
	hostB.CheckCounts("after B's run")
}

// TestWebhookOptOutReachesSharedList: a status webhook reports 131050 for a
// message host A sent, hours after its run ended. `webhook serve --limits`
// on host A puts the number on the shared list within about a second, and
// host B's import skips it.
func TestWebhookOptOutReachesSharedList(t *testing.T) {
	const first = 4915112500000
	srv := redistest.Start(t)
	limits := "--limits=" + srv.URL()
	addr := freeAddr(t)
	hostA := newWorld(t, sandbox.Options{PairInterval: -1})
	hostB := worldAt(t, hostA.api, hostA.APIBase)
	hostA.fastTiers("50", "5")
	hostA.addAccounts(account{"main", "100000000000050", "active"})
	file := hostA.WriteCSV("a.csv", first, 3)
	hostA.OK(templateRun(file, "spring_sale")...)
	rows := hostA.Rows()
	optedOut := rows[1]
	if optedOut.WAMID == "" {
		t.Fatalf("row %+v has no wamid", optedOut)
	}

	hostA.Extra = []string{"WASEND_APP_SECRET=" + e2eSecret, "WASEND_VERIFY_TOKEN=" + e2eVerify}
	recv := hostA.Start("webhook", "serve", "--addr", addr, limits)
	hostA.Extra = nil
	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"statuses":[{"id":"%s","status":"failed","timestamp":"%d","recipient_id":"%s","biz_opaque_callback_data":"%s","errors":[{"code":131050,"title":"User has stopped marketing messages"}]}]}}]}]}`,
		optedOut.WAMID, time.Now().Unix(), strings.TrimPrefix(optedOut.Phone, "+"), dispatchID(optedOut)))
	hostA.WaitFor(10*time.Second, "the receiver to take the status", func() bool {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
		req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte(e2eSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	posted := time.Now()
	hostA.WaitFor(10*time.Second, "the opt-out on the shared list", func() bool {
		return strings.Contains(hostA.OK("suppress", "list", limits).Stdout, optedOut.Phone)
	})
	if d := time.Since(posted); d > 5*time.Second {
		t.Errorf("the opt-out reached the shared list %v after the status, want about a second", d)
	}
	recv.Signal(t, syscall.SIGTERM)
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	}

	hostB.OK("campaign", "import", hostB.WriteCSV("b.csv", first, 3), "--template", "spring_sale", "--lang", "en_US", "--params", "name", limits)
	if n := len(hostB.Rows()); n != 2 {
		t.Errorf("host B imported %d rows, want 2 (%s skipped as suppressed)", n, optedOut.Phone)
	}
}
