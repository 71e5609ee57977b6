package store

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

func TestTransitionSQL(t *testing.T) {
	tests := []struct {
		move   campaign.Transition
		column string
		from   string
		to     string
	}{
		{campaign.MoveClaim, "state", "state = 'pending'", "state = 'sending'"},
		{campaign.MoveRecordSent, "messages.state", "messages.state IN ('sending', 'unknown')", "state = 'sent'"},
		{campaign.MoveRequeueUnknown, "state", "state = 'unknown'", "state = 'pending'"},
	}
	for _, tc := range tests {
		if got := fromSQL(tc.move, tc.column); got != tc.from {
			t.Errorf("%s: fromSQL = %q, want %q", tc.move, got, tc.from)
		}
		if got := toSQL(tc.move); got != tc.to {
			t.Errorf("%s: toSQL = %q, want %q", tc.move, got, tc.to)
		}
	}
	if got, want := statesql.CampaignFrom(campaign.CampaignCancel, "state"), "state IN ('running', 'paused')"; got != want {
		t.Errorf("cancel: campaignFromSQL = %q, want %q", got, want)
	}
	if got, want := statesql.CampaignTo(campaign.CampaignCancel), "state = 'finished'"; got != want {
		t.Errorf("cancel: campaignToSQL = %q, want %q", got, want)
	}
}

// TestDeliveryLadderSQL: the SQL the store generates from
// campaign.DeliveryLadder ranks and guards exactly as the Go methods do,
// for every pair of delivery states (NULL and a status off the ladder
// included), evaluated by a real SQLite database.
func TestDeliveryLadderSQL(t *testing.T) {
	st := openTest(t, newFakeClock())
	db := st.db
	ctx := context.Background()
	states := []sql.NullString{{}, {String: "played", Valid: true}}
	for _, r := range campaign.DeliveryLadder {
		states = append(states, sql.NullString{String: string(r.Delivery), Valid: true})
	}
	rank := `SELECT ` + deliveryRankSQL("?1") + `, ` + receivedSQL("?1") + `, ` +
		deliveryIsSQL("?1", campaign.DeliveryFailed) + `, ` + deliveryIsSQL("?1", campaign.DeliveryRead)
	less := `SELECT ` + deliveryRankSQL("?1") + ` < ` + deliveryRankSQL("?2")
	for _, a := range states {
		d := campaign.Delivery(a.String)
		var gotRank int
		var gotReceived, gotFailed, gotRead bool
		if err := db.QueryRowContext(ctx, rank, a).Scan(&gotRank, &gotReceived, &gotFailed, &gotRead); err != nil {
			t.Fatalf("%q: %v", a.String, err)
		}
		if gotRank != d.Rank() || gotReceived != d.Received() ||
			gotFailed != (d == campaign.DeliveryFailed) || gotRead != (d == campaign.DeliveryRead) {
			t.Errorf("%v: SQL rank %d, received %v, failed %v, read %v; Go rank %d, received %v",
				a, gotRank, gotReceived, gotFailed, gotRead, d.Rank(), d.Received())
		}
		for _, b := range states {
			var got bool
			if err := db.QueryRowContext(ctx, less, a, b).Scan(&got); err != nil {
				t.Fatalf("%q < %q: %v", a.String, b.String, err)
			}
			if want := d.Rank() < campaign.Delivery(b.String).Rank(); got != want {
				t.Errorf("%v < %v: SQL says %v, Go says %v", a, b, got, want)
			}
		}
	}
}

// TestCountTriggersFilled: every ladder guard and block in counts.sql is
// filled in, with the same text the triggers of existing databases were
// made with.
func TestCountTriggersFilled(t *testing.T) {
	if strings.Contains(countTriggers, "{{") || strings.Contains(countTriggers, "<no value>") {
		t.Fatalf("counts.sql has a placeholder left:\n%s", countTriggers)
	}
	for _, want := range []string{"coalesce(OLD.delivery, '') IN ('delivered', 'read')",
		"coalesce(NEW.delivery, '') IN ('delivered', 'read')", "NEW.delivery IS 'read'",
		"BEGIN\n    UPDATE charge_counts SET n = n - 1",
		"DELETE FROM message_charges WHERE message_id = OLD.message_id;\n",
		"message_charges WHERE message_id = NEW.message_id\n        ON CONFLICT DO UPDATE SET n = n + 1;\nEND;"} {
		if !strings.Contains(countTriggers, want) {
			t.Errorf("the count triggers lack %q", want)
		}
	}
}

// TestAdvanceDeliveryLadder walks every pair of a sent row's delivery
// (none, or a rung of the ladder) and a status Meta reports for it
// through KeepAdvances on a real row: the delivery moves to the status
// exactly when Go ranks it higher and the row has not failed.
func TestAdvanceDeliveryLadder(t *testing.T) {
	st := openTest(t, newFakeClock())
	ctx := t.Context()
	c := mustCampaign(t, st, "ladder", 1)
	m := onlyMessage(t, st, c.ID)
	from := []campaign.Delivery{""}
	var to []campaign.Delivery
	for _, r := range campaign.DeliveryLadder {
		from = append(from, r.Delivery)
		if r.Delivery != campaign.DeliveryFailed { // a failed status is not an advance
			to = append(to, r.Delivery)
		}
	}
	for _, a := range from {
		for _, b := range to {
			if _, err := st.db.ExecContext(ctx, `UPDATE messages SET state = ?, wamid = 'wamid.1', delivery = NULLIF(?, ''),
				delivered_at = NULL, read_at = NULL WHERE id = ?`, string(campaign.Sent), string(a), m.ID); err != nil {
				t.Fatal(err)
			}
			err := st.write(ctx, func(tx *Tx) error {
				adv := campaign.DeliveryAdvance{ID: m.ID, WAMID: "wamid.1"}
				adv.Fold(campaign.StatusEvent{WAMID: "wamid.1", Status: b, At: t0})
				_, err := newInboxTx(tx).KeepAdvances(ctx, nil, []campaign.DeliveryAdvance{adv}, t0)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var got sql.NullString
			var delivered, read sql.NullInt64
			if err := st.db.QueryRowContext(ctx, `SELECT delivery, delivered_at, read_at FROM messages WHERE id = ?`, m.ID).
				Scan(&got, &delivered, &read); err != nil {
				t.Fatal(err)
			}
			want, moved := a, a != campaign.DeliveryFailed
			if moved && a.Rank() < b.Rank() {
				want = b
			}
			if campaign.Delivery(got.String) != want {
				t.Errorf("%q then %q: delivery %q, want %q", a, b, got.String, want)
			}
			if wantAt := moved && b.Received(); delivered.Valid != wantAt {
				t.Errorf("%q then %q: delivered_at set %v, want %v", a, b, delivered.Valid, wantAt)
			}
			if wantAt := moved && b == campaign.DeliveryRead; read.Valid != wantAt {
				t.Errorf("%q then %q: read_at set %v, want %v", a, b, read.Valid, wantAt)
			}
		}
	}
}

// TestLadderNotSpelledBySQL: outside the migrations (history, not
// rewritten), no product source spells the delivery ladder's received
// rungs as SQL literals: the store builds those fragments from
// campaign.DeliveryLadder.
func TestLadderNotSpelledBySQL(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "migrations" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if (ext != ".go" && ext != ".sql" && ext != ".lua") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, r := range campaign.DeliveryLadder {
			if r.Received && strings.Contains(string(b), "'"+string(r.Delivery)+"'") {
				t.Errorf("%s spells the delivery %q in SQL; build it from campaign.DeliveryLadder (statesql.go)", path, r.Delivery)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
