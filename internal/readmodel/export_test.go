package readmodel_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

func TestExportMessages(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, newFakeClock())
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 10, 100))
		c, _ := playCampaign(t, st, 4, func(line, attempt int) *campaign.Outcome {
			switch line {
			case 2:
				return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}
			case 3:
				return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}
			}
			return nil // line 4 in flight, and 5 …
		})
		// … back to pending, untouched by any request (written behind the
		// store's back: a test's shortcut, never the read models').
		b.exec(t, st, `UPDATE messages SET state = 'pending', account_id = NULL,
			attempts = 0, updated_at = NULL WHERE campaign_id = ? AND line = 5`, c.ID)

		var all []readmodel.ExportRow
		if err := readmodel.New(st).ExportMessages(t.Context(), c.ID, "", func(r readmodel.ExportRow) error { all = append(all, r); return nil }); err != nil {
			t.Fatal(err)
		}
		want := []readmodel.ExportRow{
			{Line: 2, Input: storetest.Phone(0), Phone: storetest.Phone(0), State: campaign.Sent, Account: "a", Attempts: 1, WAMID: "wamid.2",
				UpdatedAt: at(500 * time.Millisecond), SentAt: at(500 * time.Millisecond)},
			{Line: 3, Input: storetest.Phone(1), Phone: storetest.Phone(1), State: campaign.Failed, Account: "a", Attempts: 1,
				ErrorCode: 131026, ErrorMessage: "undeliverable", UpdatedAt: at(1500 * time.Millisecond)},
			{Line: 4, Input: storetest.Phone(2), Phone: storetest.Phone(2), State: campaign.Sending, Account: "a", Attempts: 1,
				UpdatedAt: at(2 * time.Second)},
			{Line: 5, Input: storetest.Phone(3), Phone: storetest.Phone(3), State: campaign.Pending},
		}
		if len(all) != len(want) {
			t.Fatalf("exported %d rows, want %d: %+v", len(all), len(want), all)
		}
		for i := range want {
			g, w := all[i], want[i]
			if !g.UpdatedAt.Equal(w.UpdatedAt) || !g.SentAt.Equal(w.SentAt) {
				t.Errorf("row %d: updated %v sent %v, want %v %v", i, g.UpdatedAt, g.SentAt, w.UpdatedAt, w.SentAt)
			}
			g.UpdatedAt, g.SentAt, w.UpdatedAt, w.SentAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if g != w {
				t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
			}
		}

		var failed []int
		if err := readmodel.New(st).ExportMessages(t.Context(), c.ID, campaign.Failed, func(r readmodel.ExportRow) error {
			failed = append(failed, r.Line)
			return nil
		}); err != nil || len(failed) != 1 || failed[0] != 3 {
			t.Errorf("failed rows = %v, %v; want [3]", failed, err)
		}

		// An error from the callback stops the export at once.
		stop := errors.New("stop")
		n := 0
		err := readmodel.New(st).ExportMessages(t.Context(), c.ID, "", func(readmodel.ExportRow) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("callback error: %v after %d rows, want stop after 1", err, n)
		}

		if err := readmodel.New(st).ExportMessages(t.Context(), 99, "", func(readmodel.ExportRow) error { return nil }); !errors.Is(err, campaign.ErrNotFound) {
			t.Errorf("export of campaign 99: %v, want ErrNotFound", err)
		}
	})
}

// Meta keeps the customer service window per business number, so export's
// wrote_at is the last message to the number a row is assigned to; a row
// with no number yet shows the last message to any of ours.
func TestExportWroteAtPerNumber(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, newFakeClock())
		ctx := t.Context()
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 10, 100))
		c, _ := playCampaign(t, st, 2, func(line, attempt int) *campaign.Outcome {
			if line == 2 {
				return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}
			}
			return nil
		})
		b.exec(t, st, `UPDATE messages SET state = 'pending', account_id = NULL,
			attempts = 0, updated_at = NULL WHERE campaign_id = ? AND line = 3`, c.ID)
		if err := st.WithInbox(ctx, func(tx driver.InboxTx, now time.Time) error {
			for i, r := range []campaign.InboundRow{
				{Phone: storetest.Phone(0), PhoneNumberID: "pn-a", At: at(-3 * time.Hour)},
				{Phone: storetest.Phone(0), PhoneNumberID: "pn-other", At: at(-time.Hour)},
				{Phone: storetest.Phone(1), PhoneNumberID: "pn-other", At: at(-2 * time.Hour)},
			} {
				r.ID, r.ReceivedAt, r.Type = string(rune('a'+i)), r.At, "text"
				if _, err := tx.KeepInbound(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		wrote := map[int]time.Time{}
		if err := readmodel.New(st).ExportMessages(ctx, c.ID, "", func(r readmodel.ExportRow) error {
			wrote[r.Line] = r.WroteAt
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !wrote[2].Equal(at(-3*time.Hour)) || !wrote[3].Equal(at(-2*time.Hour)) {
			t.Errorf("wrote_at: line 2 (sent from a) %v, want %v; line 3 (no number yet) %v, want %v",
				wrote[2], at(-3*time.Hour), wrote[3], at(-2*time.Hour))
		}
	})
}
