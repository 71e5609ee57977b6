package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
	"github.com/wasend/wasend/internal/webhook"
)

const (
	e2eSecret = "e2e-app-secret"
	e2eVerify = "e2e-verify-token"
)

// startReceiver runs `wasend webhook serve` with the app secret and
// verify token in its environment, and waits until it answers.
func (w *world) startReceiver(addr string) *testproc.Proc {
	w.T.Helper()
	w.Extra = []string{"WASEND_APP_SECRET=" + e2eSecret, "WASEND_VERIFY_TOKEN=" + e2eVerify}
	p := w.Start("webhook", "serve", "--addr", addr)
	w.Extra = nil
	w.WaitFor(10*time.Second, "the receiver to answer the handshake", func() bool {
		resp, err := http.Get("http://" + addr + "/webhook?hub.mode=subscribe&hub.challenge=ok&hub.verify_token=" + e2eVerify)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

type deliveredRow struct {
	id                     int64
	state, wamid, delivery string
	errorCode              int
	next                   int64
}

// TestWebhooksSettleACampaign sends a campaign to the sandbox with status
// webhooks on, posted to `wasend webhook serve` in another process: answers
// dropped after acceptance, statuses duplicated and reordered, some failed
// with 131049. Every accepted-then-dropped row ends sent, every 131049 is
// rescheduled a day later, and the delivery states match the sandbox's own
// record. A forged body changes nothing.
func TestWebhooksSettleACampaign(t *testing.T) {
	addr := freeAddr(t)
	w := newWorld(t, sandbox.Options{Throughput: -1, PairInterval: -1,
		Faults: sandbox.Faults{Seed: 11, Drop: 0.15},
		Webhooks: sandbox.WebhookOptions{URL: "http://" + addr + "/webhook", AppSecret: []byte(e2eSecret), Seed: 5,
			Read: 0.5, Duplicate: 0.3, Reorder: 0.4, Fail: 0.1}})
	w.addAccounts(account{"main", "106540352242922", "active"}, account{"second", "106540352242923", "warm"})
	w.fastTiers("500", "50")
	recv := w.startReceiver(addr)
	csv := w.WriteCSV("list.csv", 4915100000000, 200)

	run := w.Run("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--workers", "16")
	if run.Code != 0 {
		t.Fatalf("campaign run: %s", run)
	}
	if failed := w.api.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d webhook posts not answered 200", failed)
	}

	// A forged body: the right shape for a row, the wrong key.
	rows := w.Rows()
	forged := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"statuses":[{"id":"wamid.forged","status":"failed","timestamp":"1","recipient_id":"%s","biz_opaque_callback_data":"%s","errors":[{"code":131026,"title":"forged"}]}]}}]}]}`,
		strings.TrimPrefix(rows[0].Phone, "+"), dispatchID(rows[0])))
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(forged))
	req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte("not-the-secret"), forged))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged body answered %d, want 401", resp.StatusCode)
	}

	recv.Signal(t, syscall.SIGTERM) // it applies what it stored, then exits
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	}

	byID := map[int64]deliveredRow{}
	w.Query(`SELECT id, state, coalesce(wamid, ''), coalesce(delivery, ''), coalesce(error_code, 0), next_attempt_at FROM messages`,
		func(rs *sql.Rows) error {
			var d deliveredRow
			err := rs.Scan(&d.id, &d.state, &d.wamid, &d.delivery, &d.errorCode, &d.next)
			byID[d.id] = d
			return err
		})
	dropped := map[string]bool{}
	for _, rec := range w.api.Records() {
		if rec.Outcome == sandbox.OutcomeDropped {
			dropped[rec.WAMID] = true
		}
	}
	ds := w.api.Deliveries()
	if len(ds) != 200 || len(dropped) == 0 {
		t.Fatalf("sandbox accepted %d messages (%d dropped), want 200 with some dropped", len(ds), len(dropped))
	}
	var sent, failed, read, adopted int
	for wamid, d := range ds {
		var cid, mid int64
		if _, err := fmt.Sscanf(d.CallbackData, "wasend:c%d:m%d", &cid, &mid); err != nil {
			t.Fatalf("callback data %q: %v", d.CallbackData, err)
		}
		r := byID[mid]
		switch d.Final {
		case "failed":
			failed++
			if r.state != "pending" || r.errorCode != 131049 || r.wamid != "" || time.Unix(0, r.next).Before(time.Now().Add(23*time.Hour)) {
				t.Errorf("row %d, failed with 131049 by webhook: %+v, want pending a day later", mid, r)
			}
		default:
			sent++
			if r.state != "sent" || r.wamid != wamid || r.delivery != d.Final {
				t.Errorf("row %d (dropped %v): %+v, want sent %s with %s", mid, dropped[wamid], r, d.Final, wamid)
			}
			if dropped[wamid] {
				adopted++
			}
			if d.Final == "read" {
				read++
			}
		}
	}
	got := testproc.States(w.Rows())
	if got["sent"] != sent || got["pending"] != failed || got["unknown"] != 0 || adopted == 0 {
		t.Errorf("states %v; sandbox: %d delivered or read, %d failed; %d dropped answers settled", got, sent, failed, adopted)
	}
	show := w.OK("campaign", "show", "1")
	if !strings.Contains(show.Stdout, fmt.Sprintf("delivery\t%d\t%d\t%d\t0\t", sent, sent, read)) {
		t.Errorf("campaign show does not count %d sent and delivered, %d read:\n%s", sent, read, show.Stdout)
	}
}
