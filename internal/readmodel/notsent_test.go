package readmodel_test

import (
	"testing"

	"github.com/wasend/wasend/internal/claim"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// A claim put back without a request is not a request: campaign show's
// count matches what reached the API, and the claims put back are counted
// apart.
func TestStatsNotSentApart(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(100, 100, 1000))
		c := storetest.MustCampaign(t, st, "c", 3)
		ctx := t.Context()
		for i, o := range []campaign.Outcome{
			{Kind: campaign.OutcomeSent, WAMID: "w1", Class: "ok"},
			{Kind: campaign.OutcomeRetry, Class: dispatch.ClassNotSent, Error: "not sent: the account or campaign stopped meanwhile"},
			{Kind: campaign.OutcomeSent, WAMID: "w2", Class: "ok"},
		} {
			cl, err := storetest.One(claim.New(st).ClaimN(ctx, c.ID, "r", at(0), 1))
			if err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			if err := st.RecordAll(ctx, "r", []campaign.Result{{Claim: cl, Outcome: o, At: at(0)}}); err != nil {
				t.Fatal(err)
			}
		}
		d, err := readmodel.New(st).CampaignDetail(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s := d.Stats; s.Attempts != 2 || s.NotSent != 1 {
			t.Errorf("stats %+v, want 2 requests, 1 not sent", s)
		}
		if len(d.Accounts) != 1 || d.Accounts[0].Attempts != 2 {
			t.Errorf("by account %+v, want 2 requests", d.Accounts)
		}
	})
}
