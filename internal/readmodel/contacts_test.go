package readmodel_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestSentTemplateWithinReadsOnlyCampaignsThatSent: the same template's
// repeat guard finds a campaign's sends, and reads the messages of no
// campaign whose counts say it sent nothing — an imported, unsent list of
// a million rows cost every check and import of that template a scan of
// them. The proof is a send the counts were not told of (made behind the
// store's back): it is not found.
func TestSentTemplateWithinReadsOnlyCampaignsThatSent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		ctx := t.Context()
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 4, 100))
		sent := importOne(t, st, "sent", storetest.Phone(1))
		unsent := importOne(t, st, "unsent", storetest.Phone(2))
		cl := mustOne(t, st, sent.ID, at(time.Minute))
		if err := st.RecordAll(ctx, "r1", []campaign.Result{{Claim: cl, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, At: at(time.Minute)}}); err != nil {
			t.Fatal(err)
		}
		b.exec(t, st, `UPDATE messages SET state = 'sent', sent_at = ? WHERE campaign_id = ?`, at(time.Minute).UnixNano(), unsent.ID)
		b.exec(t, st, `DELETE FROM message_counts WHERE campaign_id = ? AND state = 'sent'`, unsent.ID)
		clk.Set(at(time.Hour))

		got, err := readmodel.New(st).SentTemplateWithin(ctx, "hello", 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]campaign.Contact{storetest.Phone(1): {CampaignID: sent.ID, At: at(time.Minute)}}
		if len(got) != len(want) || !got[storetest.Phone(1)].At.Equal(want[storetest.Phone(1)].At) ||
			got[storetest.Phone(1)].CampaignID != sent.ID {
			t.Errorf("SentTemplateWithin = %v, want %v (campaign %d's messages were read though its counts show no send)", got, want, unsent.ID)
		}
	})
}
