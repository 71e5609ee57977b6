package webhook

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store/storetest"

	"github.com/wasend/wasend/internal/campaign"
)

// A retry-status (131049) for a message of a cancelled campaign does not
// block the inbox: the row fails for good (a cancelled campaign sends
// nothing again), and the bodies after it apply, an opt-out included.
func TestCancelledCampaignStatusesApply(t *testing.T) {
	f := newFixture(t, 3, Policy{})
	for i := range 3 {
		f.sent(t, i)
	}
	if _, err := f.st.CancelCampaign(t.Context(), f.c.ID); err != nil {
		t.Fatal(err)
	}
	rep := f.deliver(t,
		f.body(status{row: 0, status: "failed", at: 2 * time.Second, code: 131049, title: "Message not delivered"}),
		f.body(status{row: 1, status: "failed", at: 2 * time.Second, code: 131050, title: "User stopped marketing"}),
		f.body(status{row: 2, status: "read", at: 9 * time.Second}))
	if rep.Bodies != 3 || rep.Skipped != 0 {
		t.Errorf("report %+v, want 3 bodies applied, none skipped", rep)
	}
	if d := f.msg(t, 0); d.State != campaign.Failed || d.ErrorCode != 131049 || !d.FailedAfter {
		t.Errorf("row 0 = %+v, want failed with 131049, not requeued", d)
	}
	if supp, err := isSuppressed(t, f.st, phone(1)); err != nil || !supp {
		t.Errorf("the opt-out after it: suppressed %v, %v", supp, err)
	}
	if d := f.msg(t, 2); d.Delivery != campaign.DeliveryRead {
		t.Errorf("row 2 = %+v, want read", d)
	}
	if n, err := f.backlog(t); err != nil || n != 0 {
		t.Errorf("backlog %d, %v; want 0", n, err)
	}
	c, err := f.st.Campaign(t.Context(), f.c.ID)
	if err != nil || c.State != campaign.CampaignCancelled {
		t.Errorf("campaign %s, %v; want still cancelled", c.State, err)
	}
}

// A status that cannot apply, whatever the reason, is undone alone and
// kept with its reason; the statuses beside it and the bodies after it
// apply.
func TestStatusThatCannotApplyIsSkipped(t *testing.T) {
	f := newFixture(t, 3, Policy{})
	for i := range 3 {
		f.sent(t, i)
	}
	// Something the applier cannot get past for row 0: a trigger refusing
	// its delivery moves, set from another connection to the file.
	db, err := sql.Open("sqlite3", f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`CREATE TRIGGER refuse BEFORE UPDATE OF delivery ON messages WHEN NEW.id = %d
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`, f.claims[0].Message.ID)); err != nil {
		t.Fatal(err)
	}
	rep := f.deliver(t,
		f.body(status{row: 0, status: "delivered", at: 2 * time.Second}, status{row: 1, status: "delivered", at: 2 * time.Second}),
		f.body(status{row: 2, status: "failed", at: 2 * time.Second, code: 131050, title: "User stopped marketing"}))
	if rep.Bodies != 2 || rep.Skipped != 1 || len(rep.Skips) != 1 || !strings.Contains(rep.Skips[0], "refused by the test") ||
		!strings.Contains(rep.Skips[0], wamid(0)) {
		t.Errorf("report %+v, want 2 bodies, row 0's status skipped naming its wamid and why", rep)
	}
	if d := f.msg(t, 1); d.Delivery != campaign.DeliveryDelivered {
		t.Errorf("row 1 beside it = %+v, want delivered", d)
	}
	if supp, err := isSuppressed(t, f.st, phone(2)); err != nil || !supp {
		t.Errorf("the opt-out after it: suppressed %v, %v", supp, err)
	}
	var why string
	if err := db.QueryRow(`SELECT coalesce(error, '') FROM webhook_inbox ORDER BY id LIMIT 1`).Scan(&why); err != nil ||
		!strings.Contains(why, "refused by the test") {
		t.Errorf("kept reason %q, %v", why, err)
	}
	if n, err := f.backlog(t); err != nil || n != 0 {
		t.Errorf("backlog %d, %v; want 0", n, err)
	}
}

// A message the person has (delivered or read) is never sent again, nor
// failed, by a failed status that comes after — in whichever order the
// two arrive. What the failure says of the person still holds (131050).
func TestFailedAfterReceivedNeverResends(t *testing.T) {
	tests := []struct {
		name     string
		first    status
		code     int
		wantDel  campaign.Delivery
		wantSupp bool
	}{
		{name: "131049 after delivered", first: status{status: "delivered", at: 2 * time.Second}, code: 131049, wantDel: campaign.DeliveryDelivered},
		{name: "131049 after read", first: status{status: "read", at: 2 * time.Second}, code: 131049, wantDel: campaign.DeliveryRead},
		{name: "131026 after read", first: status{status: "read", at: 2 * time.Second}, code: 131026, wantDel: campaign.DeliveryRead},
		{name: "131050 after delivered", first: status{status: "delivered", at: 2 * time.Second}, code: 131050,
			wantDel: campaign.DeliveryDelivered, wantSupp: true},
	}
	for _, tt := range tests {
		failed := status{status: "failed", at: 10 * time.Second, code: tt.code, title: "Late failure"}
		for _, order := range []string{"in order", "failed first"} {
			t.Run(tt.name+"/"+order, func(t *testing.T) {
				f := newFixture(t, 1, Policy{})
				f.sent(t, 0)
				f.clk.Set(t0.Add(time.Minute))
				seq := []status{tt.first, failed}
				if order == "failed first" {
					seq = []status{failed, tt.first}
				}
				for _, s := range seq {
					f.deliver(t, f.body(s))
				}
				// A permanent failure that came first leaves the row failed
				// (nothing sends it again); one that put it back to pending
				// is undone by the delivery.
				d := f.msg(t, 0)
				switch {
				case order == "failed first" && tt.code != 131049:
					if d.State != campaign.Failed || d.ErrorCode != tt.code {
						t.Errorf("row = %+v, want failed with %d", d, tt.code)
					}
				case d.State != campaign.Sent || d.Delivery != tt.wantDel || d.WAMID != wamid(0):
					t.Errorf("row = %+v, want still sent and %s with its wamid", d, tt.wantDel)
				}
				cs, err := claim.New(f.st).ClaimN(t.Context(), f.c.ID, "r2", t0.Add(48*time.Hour), 10)
				if len(cs) != 0 {
					t.Errorf("claimed %d rows two days later (%v): the person would get it twice", len(cs), err)
				}
				if supp, err := isSuppressed(t, f.st, phone(0)); err != nil || supp != tt.wantSupp {
					t.Errorf("suppressed %v, %v; want %v", supp, err, tt.wantSupp)
				}
			})
		}
	}
}

// A status that comes before the send's answer is recorded, without
// callback data (Meta may omit it), is kept and applied once the wamid is
// recorded; its re-deliveries meanwhile are not duplicates.
func TestEarlyStatusWithoutCallbackDataApplied(t *testing.T) {
	f := newFixture(t, 3, Policy{})
	early := []status{
		{row: 0, status: "delivered", at: 2 * time.Second, noCB: true},
		{row: 0, status: "read", at: 5 * time.Second, noCB: true},
		{row: 1, status: "failed", at: 2 * time.Second, noCB: true, code: 131026, title: "Message Undeliverable."},
		{row: 2, status: "failed", at: 2 * time.Second, noCB: true, code: 131049, title: "Not delivered"},
	}
	rep := f.deliver(t, f.body(early...))
	if rep.Unmatched != 4 {
		t.Errorf("first delivery: %+v, want 4 unmatched", rep)
	}
	rep = f.deliver(t, f.body(early...)) // Meta retrying
	if rep.Duplicates != 0 || rep.Unmatched != 4 {
		t.Errorf("re-delivery before the answer: %+v, want 4 unmatched, no duplicates", rep)
	}
	for i := range 3 {
		f.sent(t, i)
	}
	f.clk.Set(t0.Add(time.Minute))
	f.deliver(t)
	if d := f.msg(t, 0); d.State != campaign.Sent || d.Delivery != campaign.DeliveryRead || !d.ReadAt.Equal(t0.Add(5*time.Second)) {
		t.Errorf("row 0 = %+v, want read at the webhook's time", d)
	}
	if d := f.msg(t, 1); d.State != campaign.Failed || d.ErrorCode != 131026 {
		t.Errorf("row 1 = %+v, want failed 131026", d)
	}
	if d := f.msg(t, 2); d.State != campaign.Pending || !d.NextAttemptAt.After(t0.Add(24*time.Hour)) {
		t.Errorf("row 2 = %+v, want rescheduled a day later", d)
	}
	before := []campaign.Delivery{f.msg(t, 0).Delivery, f.msg(t, 1).Delivery}
	rep = f.deliver(t, f.body(early...)) // and again, once matched
	if rep.Duplicates != 4 || rep.Unmatched != 0 {
		t.Errorf("re-delivery after the match: %+v, want 4 duplicates", rep)
	}
	if after := []campaign.Delivery{f.msg(t, 0).Delivery, f.msg(t, 1).Delivery}; after[0] != before[0] || after[1] != before[1] {
		t.Errorf("a matched re-delivery changed rows: %v → %v", before, after)
	}
	if d := f.msg(t, 2); d.State != campaign.Pending {
		t.Errorf("row 2 = %+v after a re-delivery, want pending still", d)
	}
}

// An opt-out (131050) from one of our numbers holds even when no row
// matches it any more: its campaign was deleted. One from a number that is
// not ours changes nothing.
func TestOptOutOfDeletedCampaignSuppresses(t *testing.T) {
	f := newFixture(t, 2, Policy{})
	f.sent(t, 0)
	f.sent(t, 1)
	if _, err := f.st.CancelCampaign(t.Context(), f.c.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.st.DeleteCampaign(t.Context(), f.c.ID); err != nil {
		t.Fatal(err)
	}
	optOut := status{status: "failed", at: 2 * time.Second, code: 131050, title: "User stopped marketing"}
	r0, r1 := optOut, optOut
	r1.row = 1
	foreign := []byte(strings.Replace(string(f.body(r1)), pnid, "999999999999999", 1))
	rep := f.deliver(t, f.body(r0), foreign)
	if rep.Unmatched != 2 || rep.Skipped != 0 {
		t.Errorf("report %+v, want 2 unmatched", rep)
	}
	if supp, err := isSuppressed(t, f.st, phone(0)); err != nil || !supp {
		t.Errorf("opt-out of a deleted campaign's message: suppressed %v, %v", supp, err)
	}
	if supp, err := isSuppressed(t, f.st, phone(1)); err != nil || supp {
		t.Errorf("opt-out from a number not ours: suppressed %v, %v", supp, err)
	}
}

// Early statuses (posted before the send's answer, without callback data)
// of a message Meta delivered and then reported failed with 131049 end
// the same whatever their order and wherever the send's record falls
// among them: the row is sent and delivered (or read) with its wamid, and
// never claimed again. A failure applied before the delivery puts the row
// back and clears its wamid; the delivery must still find the row
// (TestWebhookStorm's would_resend).
func TestEarlyLateFailureNeverResends(t *testing.T) {
	sts := []status{
		{status: "sent", at: 1 * time.Second, noCB: true},
		{status: "delivered", at: 2 * time.Second, noCB: true},
		{status: "read", at: 30 * time.Second, noCB: true},
		{status: "failed", at: time.Minute, noCB: true, code: 131049, title: "Not delivered"},
	}
	perms := permutations(sts)
	type sequence struct {
		perm  []status
		split int // statuses drained before the send is recorded
	}
	var seqs []sequence
	for _, p := range perms {
		for split := 0; split <= len(p); split++ {
			seqs = append(seqs, sequence{p, split})
		}
	}
	// One row per sequence in one database: the rows do not touch.
	f := newFixture(t, len(seqs), Policy{})
	f.clk.Set(t0.Add(2 * time.Minute))
	name := func(s sequence) string {
		var b strings.Builder
		for i, st := range s.perm {
			if i == s.split {
				b.WriteString("|recorded|")
			} else if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(st.status)
		}
		if s.split == len(s.perm) {
			b.WriteString("|recorded")
		}
		return b.String()
	}
	drain := func(bodies ...[]byte) {
		t.Helper()
		if err := f.st.AddToInbox(t.Context(), bodies); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ap.Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range seqs {
		for j, st := range s.perm {
			if j == s.split {
				f.sent(t, i)
			}
			st.row = i
			drain(f.body(st))
		}
		if s.split == len(s.perm) {
			f.sent(t, i)
			drain()
		}
		if d := f.msg(t, i); d.State != campaign.Sent || d.Delivery != campaign.DeliveryRead || d.WAMID != wamid(i) {
			t.Errorf("%s: row = %+v, want sent and read with %s", name(s), d, wamid(i))
		}
	}
	if err := storetest.CheckCounts(t.Context(), f.st.Reader()); err != nil {
		t.Error(err)
	}
	cs, err := claim.New(f.st).ClaimN(t.Context(), f.c.ID, "r2", t0.Add(48*time.Hour), len(seqs))
	if len(cs) != 0 {
		t.Errorf("claimed %d rows two days later (%v): their people would get them twice", len(cs), err)
	}
	var unmatched int
	if err := f.st.Reader().QueryRowContext(t.Context(), `SELECT count(*) FROM message_statuses WHERE message_id IS NULL OR applied = 0`).Scan(&unmatched); err != nil || unmatched != 0 {
		t.Errorf("%d statuses left unmatched or unapplied (%v), want none", unmatched, err)
	}
}

// campaign retry --undelivered clears the wamids of sent rows no status
// reported delivered; a late delivery of the old send must settle its row,
// not leave it to be sent again. Row 0 had a status kept (sent), so its
// old wamid finds it through that status even without callback data; row
// 1 had none, and its late delivery finds it by the callback data wasend
// set on the send; row 2 heard nothing and goes again.
func TestLateDeliveryAfterRetryUndelivered(t *testing.T) {
	f := newFixture(t, 3, Policy{})
	for i := range 3 {
		f.sent(t, i)
	}
	f.clk.Set(t0.Add(time.Minute))
	f.deliver(t, f.body(status{row: 0, status: "sent", at: 2 * time.Second}))
	f.clk.Set(t0.Add(3 * time.Hour))
	if n, err := f.st.RequeueUndelivered(t.Context(), f.c.ID, t0.Add(2*time.Hour)); err != nil || n != 3 {
		t.Fatalf("RequeueUndelivered = %d, %v; want the 3 rows back", n, err)
	}
	rep := f.deliver(t, f.body(status{row: 0, status: "delivered", at: 2 * time.Hour, noCB: true}),
		f.body(status{row: 1, status: "delivered", at: 2 * time.Hour}))
	if rep.Adopted != 2 || rep.Unmatched != 0 {
		t.Errorf("report %+v; want both late deliveries matched and adopted", rep)
	}
	for i := range 2 {
		if d := f.msg(t, i); d.State != campaign.Sent || d.Delivery != campaign.DeliveryDelivered || d.WAMID != wamid(i) {
			t.Errorf("row %d = %+v, want sent and delivered with %s", i, d, wamid(i))
		}
	}
	cs, err := claim.New(f.st).ClaimN(t.Context(), f.c.ID, "r2", t0.Add(4*time.Hour), 3)
	if err != nil || len(cs) != 1 || cs[0].Message.ID != f.claims[2].Message.ID {
		t.Errorf("claimed %v (%v); want only row 2, which no status spoke of", cs, err)
	}
}
