package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestRecipientsByUserID: a list naming people by phone, by business-scoped
// user id, or both, sent through the sandbox with signed status webhooks
// and answers posted to `wasend webhook serve`. No user id ever goes in to
// (the sandbox, like Meta, would answer 200 and drop it): the user-id rows
// go in recipient, the row with both goes to the phone, every status and
// answer finds its row, and the user ids the webhooks pair with the
// numbers make a later list's user id the same person as the number sent
// to before.
func TestRecipientsByUserID(t *testing.T) {
	addr := freeAddr(t)
	w := newWorld(t, sandbox.Options{Throughput: -1, PairInterval: -1,
		Webhooks: sandbox.WebhookOptions{URL: "http://" + addr + "/webhook", AppSecret: []byte(e2eSecret), Seed: 3,
			Read: 0.5, Reply: 1}})
	w.addAccounts(account{"main", "106540352242922", "active"})
	w.fastTiers("500", "50")
	recv := w.startReceiver(addr)
	list := filepath.Join(w.Dir, "people.csv")
	if err := os.WriteFile(list, []byte("phone,user_id,name\n"+
		"+4915100000001,,Ana\n"+
		",US.1003,Ben\n"+
		"+4915100000002,US.1004,Cem\n"+
		",US.1005,Dan\n"+
		",us.bad,Eve\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := w.Run(templateRun(list, "spring_sale")...)
	if run.Code != 0 {
		t.Fatalf("campaign run: %s", run)
	}
	if !strings.Contains(run.Stderr+run.Stdout, `"us.bad"`) {
		t.Errorf("the bad user id is not reported with its value:\n%s", run)
	}
	if failed := w.api.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d webhook posts not answered 200", failed)
	}
	recv.Signal(t, syscall.SIGTERM)
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	}

	sentTo := map[string]string{} // recipient → to or recipient field
	for _, rec := range w.api.Records() {
		if rec.Outcome == sandbox.OutcomeIgnored || strings.Contains(rec.To, ".") {
			t.Errorf("a user id sent in to: %+v", rec)
		}
		if rec.To != "" {
			sentTo[rec.To] = "to"
		}
		if rec.Recipient != "" {
			sentTo[rec.Recipient] = "recipient"
		}
	}
	want := map[string]string{"+4915100000001": "to", "US.1003": "recipient", "+4915100000002": "to", "US.1005": "recipient"}
	if len(sentTo) != len(want) {
		t.Errorf("sent %v, want %v", sentTo, want)
	}
	for who, field := range want {
		if sentTo[who] != field {
			t.Errorf("%s sent in %q, want %q (all: %v)", who, sentTo[who], field, sentTo)
		}
	}
	if acc := w.api.Accepted(); len(acc) != 4 {
		t.Errorf("accepted %v, want each of the 4 people once", acc)
	}

	// Every row settled by its statuses, and every answer linked to it.
	w.Query(`SELECT m.phone, coalesce(m.delivery, ''), (SELECT count(*) FROM inbound_messages i WHERE i.message_id = m.id)
		FROM messages m`, func(rs *sql.Rows) error {
		var phone, delivery string
		var answers int
		if err := rs.Scan(&phone, &delivery, &answers); err != nil {
			return err
		}
		if delivery != "delivered" && delivery != "read" {
			t.Errorf("row %s: delivery %q, want its status webhooks applied", phone, delivery)
		}
		if answers != 1 {
			t.Errorf("row %s: %d answers linked, want its one", phone, answers)
		}
		return nil
	})

	// The statuses paired +4915100000001 with its user id in the sandbox:
	// a new list naming only that id is the person contacted before.
	again := filepath.Join(w.Dir, "again.csv")
	if err := os.WriteFile(again, []byte("user_id,name\nZZ.4915100000001,Ana\nUS.1003,Ben\nUS.9999,Fay\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := w.OK("campaign", "check", again, "--template", "spring_sale", "--lang", "en_US", "--params", "name",
		"--skip-contacted-within", "1h")
	out := check.Stdout + check.Stderr
	for _, s := range []string{"line 2", "line 3"} {
		if !strings.Contains(out, s) {
			t.Errorf("check does not skip %s as contacted:\n%s", s, out)
		}
	}
	if strings.Contains(out, "line 4") || !strings.Contains(out, "contacted within 1h0m0s") {
		t.Errorf("check: want lines 2 and 3 contacted within 1h, line 4 kept:\n%s", out)
	}
}
