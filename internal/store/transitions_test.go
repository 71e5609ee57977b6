package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestEveryTransition walks every named move from every state against a
// real database: a move the table allows takes the row to its target
// state, any other leaves it where it was (a no-op, or an error that says
// why). Then every pair of states is either a legal move that some named
// function made, or one that none of them can make.
func TestEveryTransition(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	acct := mustAccount(t, st, "a", campaign.TierActive, limited(1000, 1000, 1_000_000))
	ctx := t.Context()
	now := clk.Now()

	// record stores an outcome for the row as runner r1's claim.
	record := func(o campaign.Outcome) func(campaign.Message) error {
		return func(m campaign.Message) error {
			c := campaign.Claim{Message: m, Account: acct, At: now}
			return st.Record(ctx, c, "r1", o, now)
		}
	}
	// withWAMID gives the row a wamid (its state unchanged) for the
	// webhook moves, which apply only to the request a status speaks of.
	withWAMID := func(m campaign.Message) string {
		w := fmt.Sprintf("wamid.m%d", m.ID)
		if _, err := st.db.ExecContext(ctx, `UPDATE messages SET wamid = ? WHERE id = ?`, w, m.ID); err != nil {
			t.Fatal(err)
		}
		return w
	}
	moves := []struct {
		name string
		move campaign.Transition
		do   func(m campaign.Message) error
	}{
		{"claim", campaign.MoveClaim, func(m campaign.Message) error {
			_, err := st.ClaimN(ctx, m.CampaignID, "r1", now, 1)
			return err
		}},
		{"suppress at send", campaign.MoveSuppressAtSend, func(m campaign.Message) error {
			if _, err := st.Suppress(ctx, []campaign.Suppression{{Phone: m.Phone, Reason: "opted out"}}); err != nil {
				return err
			}
			defer st.db.ExecContext(ctx, `DELETE FROM suppressions`)
			// The campaign's one row failed: nothing is left to claim.
			if _, err := st.ClaimN(ctx, m.CampaignID, "r1", now, 1); !errors.Is(err, campaign.ErrDone) {
				return fmt.Errorf("claim: %v, want %w", err, campaign.ErrDone)
			}
			return nil
		}},
		{"record sent", campaign.MoveRecordSent, record(campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"})},
		{"record held", campaign.MoveRecordHeld, func(m campaign.Message) error {
			err := record(campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.held", Class: "ok", Held: true})(m)
			if d := readMessage(t, st, m.ID).state; err == nil && d == string(campaign.Sent) {
				var delivery string
				if err := st.db.QueryRowContext(ctx, `SELECT delivery FROM messages WHERE id = ?`, m.ID).Scan(&delivery); err != nil {
					return err
				}
				if delivery != string(campaign.DeliveryHeld) {
					return fmt.Errorf("delivery %q after a held answer, want held", delivery)
				}
			}
			return err
		}},
		{"record sent in bulk", campaign.MoveRecordSent, func(m campaign.Message) error {
			c := campaign.Claim{Message: m, Account: acct, At: now, AttemptID: 1 << 40}
			return st.RecordAll(ctx, "r1", []campaign.Result{{Claim: c, At: now,
				Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2", Class: "ok"}}})
		}},
		{"record retry", campaign.MoveRecordRetry, record(campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now.Add(time.Minute),
			SpendsRetry: true, ErrorCode: 131000, Error: "try again", Class: "transient"})},
		{"put back unsent", campaign.MovePutBack, record(campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now,
			Refund: true, Error: "not sent: interrupted", Class: "not-sent"})},
		{"record failed", campaign.MoveRecordFailed, record(campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026,
			Error: "undeliverable", Class: "permanent"})},
		{"record unknown", campaign.MoveRecordUnknown, record(campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "timeout",
			Class: "ambiguous"})},
		{"rescue", campaign.MoveRescue, func(m campaign.Message) error {
			_, err := st.Rescue(ctx, m.CampaignID, now, func(campaign.Runner) bool { return false })
			return err
		}},
		{"lapse", campaign.MoveLapse, func(m campaign.Message) error {
			// A claim whose request never started: its attempt unmarked.
			if _, err := st.db.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, started)
				VALUES (?, ?, ?, 0)`, m.ID, acct.ID, now.UnixNano()); err != nil {
				return err
			}
			_, err := st.Rescue(ctx, m.CampaignID, now, func(campaign.Runner) bool { return false })
			return err
		}},
		{"requeue failed", campaign.MoveRequeueFailed, func(m campaign.Message) error {
			_, err := st.RequeueFailed(ctx, m.CampaignID, nil)
			return err
		}},
		{"requeue failed by code", campaign.MoveRequeueFailed, func(m campaign.Message) error {
			_, err := st.RequeueFailed(ctx, m.CampaignID, []int{131026})
			return err
		}},
		{"expire", campaign.MoveExpire, func(m campaign.Message) error {
			return st.write(ctx, func(tx *Tx) error { return expirePending(ctx, tx, m.CampaignID, "expired", now) })
		}},
		{"fail: window never open", campaign.MoveFailNeverOpen, func(m campaign.Message) error {
			return st.write(ctx, func(tx *Tx) error { return failNeverOpen(ctx, tx, m.ID, "never open", now) })
		}},
		{"skip: sent by another host", campaign.MoveSkipElsewhere, func(m campaign.Message) error {
			return st.write(ctx, func(tx *Tx) error { return skipElsewhere(ctx, tx, m.ID, "sent by another host", now) })
		}},
		{"skip: no service window", campaign.MoveSkipNoWindow, func(m campaign.Message) error {
			return st.write(ctx, func(tx *Tx) error { return skipNoWindow(ctx, tx, m.ID, "no customer service window: never wrote", now) })
		}},
		{"adopt send", campaign.MoveAdoptSend, func(m campaign.Message) error {
			ev := campaign.StatusEvent{WAMID: "wamid.adopted", At: now}
			return st.write(ctx, func(tx *Tx) error { _, err := newInboxTx(tx).AdoptSend(ctx, m.ID, ev, now); return err })
		}},
		{"fail after send", campaign.MoveFailAfterSend, func(m campaign.Message) error {
			ev := campaign.StatusEvent{WAMID: withWAMID(m), At: now, ErrorCode: 131026}
			return st.write(ctx, func(tx *Tx) error {
				_, err := newInboxTx(tx).FailAfterSend(ctx, m.ID, ev, "undeliverable", now)
				return err
			})
		}},
		{"reschedule undelivered", campaign.MoveRescheduleUndelivered, func(m campaign.Message) error {
			ev := campaign.StatusEvent{WAMID: withWAMID(m), At: now, ErrorCode: 131049}
			return st.write(ctx, func(tx *Tx) error {
				_, err := newInboxTx(tx).RescheduleAfterFailure(ctx, m.ID, ev, now.Add(24*time.Hour), "not delivered", now)
				return err
			})
		}},
		{"requeue undelivered", campaign.MoveRequeueUndelivered, func(m campaign.Message) error {
			if _, err := st.db.ExecContext(ctx, `UPDATE messages SET sent_at = 1 WHERE id = ?`, m.ID); err != nil {
				return err
			}
			_, err := st.RequeueUndelivered(ctx, m.CampaignID, now)
			return err
		}},
		{"requeue unknown", campaign.MoveRequeueUnknown, func(m campaign.Message) error {
			_, err := st.RequeueUnknown(ctx, m.CampaignID)
			return err
		}},
	}

	walked := map[campaign.Transition]bool{}
	made := map[[2]campaign.State]bool{}
	var sentBack []campaign.Transition // moves seen taking a sent row back to pending
	for _, mv := range moves {
		walked[mv.move] = true
		for _, from := range campaign.States {
			name := fmt.Sprintf("%s from %s", mv.name, from)
			c := mustCampaign(t, st, name, 1)
			m := onlyMessage(t, st, c.ID)
			// The row is put in its state the way a test may: directly,
			// as runner r1's claim through the account (r1 is not
			// registered, so a rescue finds it orphaned).
			if _, err := st.db.ExecContext(ctx, `UPDATE messages SET state = ?, runner_id = 'r1', account_id = ?,
				error_code = CASE WHEN ? = 'failed' THEN 131026 END WHERE id = ?`, string(from), acct.ID, string(from), m.ID); err != nil {
				t.Fatal(err)
			}
			err := mv.do(m)
			got := campaign.State(readMessage(t, st, m.ID).state)
			if slices.Contains(mv.move.From(), from) {
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if got != mv.move.To() {
					t.Errorf("%s: row is %s, want %s", name, got, mv.move.To())
				}
			} else if got != from {
				t.Errorf("%s: row moved to %s; the table does not allow it (err %v)", name, got, err)
			}
			if got != from {
				made[[2]campaign.State{from, got}] = true
			}
			if from == campaign.Sent && got == campaign.Pending {
				sentBack = append(sentBack, mv.move)
			}
			checkCounts(t, st, name, c.ID)
		}
	}
	for _, tr := range campaign.AllTransitions {
		if !walked[tr] {
			t.Errorf("transition %s is not walked", tr)
		}
	}
	for _, from := range campaign.States {
		for _, to := range campaign.States {
			if from == to {
				continue
			}
			if legal, ok := legal(from, to), made[[2]campaign.State{from, to}]; legal != ok {
				t.Errorf("%s → %s: legal %v, made by a store function %v", from, to, legal, ok)
			}
		}
	}
	if backs := sentBack; len(backs) > 0 {
		for _, b := range backs {
			if !slices.Contains(campaign.SentBack, b) {
				t.Errorf("%s moved a sent row back to pending: a double send", b)
			}
		}
	}
}

func onlyMessage(t *testing.T, st *Store, campaignID int64) campaign.Message {
	t.Helper()
	m := campaign.Message{CampaignID: campaignID}
	if err := st.db.QueryRowContext(context.Background(), `SELECT id, phone FROM messages WHERE campaign_id = ?`, campaignID).
		Scan(&m.ID, &m.Phone); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEveryCampaignTransition walks every named campaign move from every
// stored state (cancelled: finished with cancelled_at) on a real database.
func TestEveryCampaignTransition(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	acct := mustAccount(t, st, "a", campaign.TierActive, limited(1000, 1000, 1_000_000))
	ctx := t.Context()
	now := clk.Now()
	setRows := func(id int64, state campaign.State) {
		t.Helper()
		if _, err := st.db.ExecContext(ctx, `UPDATE messages SET state = ?, error_code = 131026 WHERE campaign_id = ?`,
			string(state), id); err != nil {
			t.Fatal(err)
		}
	}
	moves := []struct {
		name string
		move campaign.CampaignTransition
		do   func(id int64) error
	}{
		{"pause", campaign.CampaignPause, func(id int64) error { _, err := st.PauseCampaign(ctx, id, "by hand"); return err }},
		{"pause on an outage", campaign.CampaignPause, func(id int64) error {
			return st.SetOutage(ctx, id, campaign.Outage{Since: now, NextProbe: now, Error: "down"}, "the Cloud API was out")
		}},
		{"pause: no usable account", campaign.CampaignPauseNoAccount, func(id int64) error {
			if _, err := st.db.ExecContext(ctx, `INSERT INTO campaign_accounts (campaign_id, account_id, reason, error_code, at)
				VALUES (?, ?, 'dropped', 1, 0)`, id, acct.ID); err != nil {
				return err
			}
			_, err := st.ClaimN(ctx, id, "r1", now, 1)
			return err
		}},
		{"resume", campaign.CampaignResume, func(id int64) error { _, err := st.ResumeCampaign(ctx, id); return err }},
		{"finish", campaign.CampaignFinish, func(id int64) error {
			setRows(id, campaign.Sent)
			_, err := st.ClaimN(ctx, id, "r1", now, 1)
			return err
		}},
		{"reopen", campaign.CampaignReopen, func(id int64) error {
			setRows(id, campaign.Failed)
			_, err := st.RequeueFailed(ctx, id, nil)
			return err
		}},
		{"cancel", campaign.CampaignCancel, func(id int64) error { _, err := st.CancelCampaign(ctx, id); return err }},
	}
	type shown struct {
		state     campaign.CampaignState
		cancelled bool
	}
	read := func(id int64) shown {
		t.Helper()
		var s shown
		if err := st.db.QueryRowContext(ctx, `SELECT state, cancelled_at IS NOT NULL FROM campaigns WHERE id = ?`, id).
			Scan(&s.state, &s.cancelled); err != nil {
			t.Fatal(err)
		}
		return s
	}
	froms := []shown{{campaign.CampaignRunning, false}, {campaign.CampaignPaused, false}, {campaign.CampaignFinished, false},
		{campaign.CampaignFinished, true}}
	walked := map[campaign.CampaignTransition]bool{}
	for _, mv := range moves {
		walked[mv.move] = true
		rule := campaign.CampaignTransitions[mv.move]
		for _, from := range froms {
			name := fmt.Sprintf("%s from %s (cancelled %v)", mv.name, from.state, from.cancelled)
			c := mustCampaign(t, st, name, 1)
			if _, err := st.db.ExecContext(ctx, `UPDATE campaigns SET state = ?, cancelled_at = CASE WHEN ? THEN 1 END WHERE id = ?`,
				string(from.state), from.cancelled, c.ID); err != nil {
				t.Fatal(err)
			}
			err := mv.do(c.ID)
			got := read(c.ID)
			allowed := !from.cancelled && slices.Contains(rule.From, from.state)
			want := from
			if allowed {
				want.state = rule.To
				want.cancelled = mv.move == campaign.CampaignCancel
			}
			if got != want {
				t.Errorf("%s: campaign is %+v, want %+v (err %v)", name, got, want, err)
			}
			checkCounts(t, st, name, c.ID)
		}
	}
	for tr := range campaign.CampaignTransitions {
		if !walked[tr] {
			t.Errorf("campaign transition %s is not walked", tr)
		}
	}
}

// legal reports whether some transition of campaign.Transitions moves a
// row from one state to another.
func legal(from, to campaign.State) bool {
	for _, r := range campaign.Transitions {
		if r.To == to && slices.Contains(r.From, from) {
			return true
		}
	}
	return false
}
