//go:build torture

package torture

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

const (
	stormSecret = "storm-app-secret"
	stormVerify = "storm-verify-token"
)

// TestWebhookStorm sends three campaigns to a sandbox whose status
// webhooks come out of order, duplicated, early (before the send's answer,
// without callback data), as opt-outs (131050), as 131049 failures and as
// late 131049s after delivered or read, to `wasend webhook serve` in
// another process. Campaign 1 stops at its daily cap and is cancelled,
// campaign 2 finishes and is deleted, campaign 3 finishes; only then are
// the statuses held back posted. Judged by the sandbox's record: nobody
// messaged twice; no status lost (each kept and applied to its row, or
// kept unmatched for a deleted campaign's message); every opt-out
// applied; no message a status reported delivered or read, nor a
// cancelled campaign's, waits to be sent again.
func TestWebhookStorm(t *testing.T) {
	var (
		nA, capA = size(60, 400), size(30, 200)
		nB, nC   = size(40, 300), size(80, 800)
	)
	seed := testSeed(t)
	addr := stormAddr(t)
	api := sandbox.New(sandbox.Options{Throughput: -1, PairInterval: -1,
		Webhooks: sandbox.WebhookOptions{URL: "http://" + addr + "/webhook", AppSecret: []byte(stormSecret), Seed: int64(seed),
			Read: 0.5, Duplicate: 0.3, Reorder: 0.5, Fail: 0.15, OptOut: 0.1, LateFail: 0.15, Early: 0.25,
			Delay: time.Hour}}) // held back until FlushWebhooks, early ones aside
	ts := httptest.NewServer(api)
	t.Cleanup(ts.Close)
	w := testproc.New(t, testproc.Options{APIBase: ts.URL, TokenEnv: tokenEnv,
		Timeout: size(90*time.Second, 10*time.Minute), Poll: 50 * time.Millisecond})
	w.OK("tier", "set", "new", "--rate", "500", "--burst", "50", "--daily-cap", fmt.Sprint(capA))
	w.OK("account", "add", "main", "--phone-number-id", "100000000000001", "--tier", "new", "--token-env", tokenEnv)

	w.Extra = []string{"WASEND_APP_SECRET=" + stormSecret, "WASEND_VERIFY_TOKEN=" + stormVerify}
	recv := w.Start("webhook", "serve", "--addr", addr)
	w.Extra = nil
	w.WaitFor(10*time.Second, "the receiver to answer the handshake", func() bool {
		resp, err := http.Get("http://" + addr + "/webhook?hub.mode=subscribe&hub.challenge=ok&hub.verify_token=" + stormVerify)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	start := time.Now()
	// Campaign 1: stops at the cap, then cancelled with rows left.
	r := w.Run(runArgs(w.WriteCSV("cancelled.csv", 4915110000000, nA), "--stop-when-capped")...)
	checkOutput(t, "campaign run (capped)", r)
	if r.Code != 3 {
		t.Fatalf("campaign 1 at its cap: want exit 3\n%s", r)
	}
	w.OK("campaign", "cancel", "1")
	w.OK("tier", "set", "new", "--rate", "500", "--burst", "50", "--daily-cap", "100000")
	// Campaign 2: finished, then deleted.
	if r := w.Run(runArgs(w.WriteCSV("deleted.csv", 4915120000000, nB))...); r.Code != 0 {
		t.Fatalf("campaign 2: %s", r)
	}
	w.OK("campaign", "delete", "2", "--yes")
	// Campaign 3: finished.
	if r := w.Run(runArgs(w.WriteCSV("kept.csv", 4915130000000, nC))...); r.Code != 0 {
		t.Fatalf("campaign 3: %s", r)
	}
	if failed := api.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d webhook posts not answered 200", failed)
	}
	w.WaitFor(size(30*time.Second, 5*time.Minute), "the receiver to apply every status", func() bool {
		var left int
		w.Query(`SELECT (SELECT count(*) FROM webhook_inbox WHERE applied_at IS NULL) +
			(SELECT count(*) FROM message_statuses WHERE applied = 0)`, func(rs *sql.Rows) error { return rs.Scan(&left) })
		return left == 0
	})
	recv.Signal(t, syscall.SIGTERM) // it applies what it stored, then exits
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	} else {
		checkOutput(t, "webhook serve", r)
	}
	elapsed := time.Since(start)

	// Nobody twice.
	twice := 0
	for to, n := range api.Accepted() {
		if n > 1 {
			twice++
			t.Errorf("%s was sent %d messages", to, n)
		}
	}
	ds := api.Deliveries()
	if len(ds) != capA+nB+nC {
		t.Fatalf("the sandbox accepted %d messages, want %d (the cap of campaign 1, then 2 and 3 whole)", len(ds), capA+nB+nC)
	}

	// What the database kept.
	type kept struct {
		messageID sql.NullInt64
		applied   bool
	}
	statuses := map[string]kept{} // wamid/status
	w.Query(`SELECT wamid, status, message_id, applied FROM message_statuses`, func(rs *sql.Rows) error {
		var (
			wamid, st string
			k         kept
		)
		err := rs.Scan(&wamid, &st, &k.messageID, &k.applied)
		statuses[wamid+"/"+st] = k
		return err
	})
	inboxed, skipped := map[string]bool{}, 0
	w.Query(`SELECT body, coalesce(error, '') FROM webhook_inbox`, func(rs *sql.Rows) error {
		var (
			body []byte
			why  string
		)
		if err := rs.Scan(&body, &why); err != nil {
			return err
		}
		if why != "" {
			skipped++
			t.Logf("kept with a reason: %s", why)
		}
		for _, s := range bodyStatuses(t, body) {
			inboxed[s] = true
		}
		return nil
	})
	type rowState struct {
		id                            int64
		campaign                      int64
		state, wamid, delivery, phone string
		next                          int64
	}
	rows := map[string]rowState{} // by phone
	w.Query(`SELECT id, campaign_id, state, coalesce(wamid, ''), coalesce(delivery, ''), phone, next_attempt_at FROM messages`,
		func(rs *sql.Rows) error {
			var r rowState
			err := rs.Scan(&r.id, &r.campaign, &r.state, &r.wamid, &r.delivery, &r.phone, &r.next)
			rows[r.phone] = r
			return err
		})
	suppressed := map[string]bool{}
	w.Query(`SELECT phone FROM suppressions`, func(rs *sql.Rows) error {
		var p string
		err := rs.Scan(&p)
		suppressed[p] = true
		return err
	})

	var lost, unapplied, optOuts, missedOptOuts, early, lateFails, resend int
	for wamid, d := range ds {
		var cid, mid int64
		if _, err := fmt.Sscanf(d.CallbackData, "wasend:c%d:m%d", &cid, &mid); err != nil {
			t.Fatalf("callback data %q: %v", d.CallbackData, err)
		}
		if d.Early {
			early++
		}
		// No status lost: every one reached the inbox and was kept; one
		// of a row that exists was matched to it and applied.
		for _, st := range d.Statuses {
			key := wamid + "/" + st
			k, ok := statuses[key]
			switch {
			case !inboxed[key]:
				lost++
				t.Errorf("%s of campaign %d: never stored", key, cid)
			case cid == 2 && !ok && !d.Early:
				// A deleted campaign's early statuses went with its rows;
				// the others came after and are kept unmatched.
				lost++
				t.Errorf("%s of the deleted campaign: not kept", key)
			case cid != 2 && (!ok || !k.messageID.Valid || k.messageID.Int64 != mid || !k.applied):
				unapplied++
				t.Errorf("%s of campaign %d (early %v): kept %v as %+v, want matched to row %d and applied", key, cid, d.Early, ok, k, mid)
			}
		}
		if d.Code == 131050 {
			optOuts++
			if !suppressed[d.To] {
				missedOptOuts++
				t.Errorf("%s opted out (campaign %d), not suppressed", d.To, cid)
			}
		}
		if cid == 2 {
			continue
		}
		row, ok := rows[d.To]
		if !ok || row.id != mid {
			t.Errorf("%s: no row %d (found %+v)", d.To, mid, row)
			continue
		}
		received := d.Final == "read" || d.Final == "delivered"
		if received && d.Code != 0 {
			lateFails++
		}
		switch {
		case received && cid == 1 && d.Code != 0 && row.state == "failed":
			// Its late failure came first and failed the cancelled
			// campaign's row for good; what came after does not undo it.
		case received:
			if row.state != "sent" || row.delivery != d.Final || row.wamid != wamid {
				resend++
				t.Errorf("%s (campaign %d, late failure %v): row %+v, want sent and %s with %s", d.To, cid, d.Code != 0, row, d.Final, wamid)
			}
		case d.Code == 131049 && cid == 1:
			// Held back until after the cancel, it fails the row for good.
			// An early one may have been applied while campaign 1 still
			// ran: it put the row off a day like any 131049, and the
			// cancel keeps it from ever being claimed.
			putOff := row.state == "pending" && !time.Unix(0, row.next).Before(start.Add(23*time.Hour))
			if row.state != "failed" && !(d.Early && putOff) {
				resend++
				t.Errorf("%s: 131049 (early %v) for the cancelled campaign left row %+v, want failed", d.To, d.Early, row)
			}
		case d.Code == 131049:
			if row.state != "pending" || time.Unix(0, row.next).Before(start.Add(23*time.Hour)) {
				t.Errorf("%s: 131049 left row %+v, want pending a day later", d.To, row)
			}
		default:
			if row.state != "failed" {
				t.Errorf("%s: failed %d, row %+v", d.To, d.Code, row)
			}
		}
	}
	if early == 0 || lateFails == 0 || optOuts == 0 {
		t.Errorf("the storm lacked a kind (early %d, late failures %d, opt-outs %d); the test proved less than it claims", early, lateFails, optOuts)
	}
	t.Logf("FIGURES webhook-storm accepted=%d twice=%d early=%d late_failures=%d opt_outs=%d missed_opt_outs=%d lost=%d unapplied=%d would_resend=%d kept_with_reason=%d elapsed=%v",
		len(ds), twice, early, lateFails, optOuts, missedOptOuts, lost, unapplied, resend, skipped, elapsed.Round(time.Millisecond))
}

// bodyStatuses lists the wamid/status pairs of a stored webhook body.
func bodyStatuses(t *testing.T, body []byte) []string {
	t.Helper()
	var p struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Statuses []struct {
						ID     string `json:"id"`
						Status string `json:"status"`
					} `json:"statuses"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("stored body %.80s: %v", body, err)
		return nil
	}
	var out []string
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			for _, s := range c.Value.Statuses {
				out = append(out, s.ID+"/"+s.Status)
			}
		}
	}
	return out
}

// stormAddr is a free local address for the receiver.
func stormAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
