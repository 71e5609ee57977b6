package readmodel_test

import (
	"errors"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestHeldCountedApart: sends answered held_for_quality_assessment are
// counted held, not sent, in the kept figures status reads; at --max-held
// of them the claim stops the campaign (WaitHeld) with rows still due, and
// the counts kept as rows move equal a recount.
func TestHeldCountedApart(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(100, 100, 1000))
		c := storetest.MustCampaign(t, st, "c", 4)
		ctx := t.Context()
		if _, err := st.SetSending(ctx, c.ID, 2, 0); err != nil {
			t.Fatal(err)
		}
		for i, o := range []campaign.Outcome{
			{Kind: campaign.OutcomeSent, WAMID: "w1", Class: "ok"},
			{Kind: campaign.OutcomeSent, WAMID: "w2", Class: "ok", Held: true},
			{Kind: campaign.OutcomeSent, WAMID: "w3", Class: "ok", Held: true},
		} {
			cl, err := storetest.One(claim.New(st).ClaimN(ctx, c.ID, "r", at(0), 1))
			if err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			if err := st.RecordAll(ctx, "r", []campaign.Result{{Claim: cl, Outcome: o, At: at(0)}}); err != nil {
				t.Fatal(err)
			}
		}
		var we *campaign.WaitError
		if _, err := claim.New(st).ClaimN(ctx, c.ID, "r", at(0), 1); !errors.As(err, &we) || we.Reason != campaign.WaitHeld {
			t.Errorf("claim with 2 held at --max-held 2: %v; want a wait for held sends", err)
		}
		f, err := readmodel.New(st).CampaignDelivery(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if f.Held != 2 || f.Sent != 1 || f.MaxHeld != 2 || !f.HeldStop() || !f.AnyReport() || f.Reported != 0 {
			t.Errorf("figures %+v: want 2 held, 1 sent, none reported, stopped at --max-held 2", f)
		}
		if b.dialect == readmodel.SQLite { // the recount's SQL is SQLite's
			if err := storetest.CheckCounts(ctx, st.Reader()); err != nil {
				t.Error(err)
			}
		}
		// --max-held 0 never stops.
		if _, err := st.SetSending(ctx, c.ID, 0, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.One(claim.New(st).ClaimN(ctx, c.ID, "r", at(0), 1)); err != nil {
			t.Errorf("claim with --max-held 0: %v", err)
		}
	})
}
