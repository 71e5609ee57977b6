package storetest

import (
	"slices"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// testImportContinues: an import of the same message finds the earlier
// campaign (SameMessage) and its numbers (EachNumber) inside its own
// transaction, and adds only its new rows to it (ContinueInto): one
// campaign, its rows counted once, this file's skipped rows, source and
// keys in place of the earlier file's.
func (s suite) testImportContinues(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	first, err := st.Import(t.Context(), testCampaign("fp-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback()
	for i := range 3 {
		if _, err := first.Add(t.Context(), campaign.Message{Line: i + 2, Input: Phone(i), Phone: Phone(i), Body: "Hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Skip(t.Context(), 5, "garbage", "not a phone number"); err != nil {
		t.Fatal(err)
	}
	first.SetKeys("src-1", "rcp-1")
	prior, err := first.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	other := testCampaign("fp-other")
	other.Spec.Text = "Bye {{name}}"
	mustCampaignOf(t, st, other)

	next := testCampaign("fp-2")
	next.Source = "spring-more.csv"
	im, err := st.Import(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	sibs, err := im.SameMessage(t.Context())
	if err != nil || len(sibs) != 1 || sibs[0].Campaign.ID != prior.ID || sibs[0].RecipientsKey != "rcp-1" {
		t.Fatalf("SameMessage = %+v, %v; want campaign %d with its recipients key", sibs, err, prior.ID)
	}
	var have []string
	if err := im.EachNumber(t.Context(), prior.ID, func(p string) { have = append(have, p) }); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(have); !slices.Equal(have, []string{Phone(0), Phone(1), Phone(2)}) {
		t.Errorf("EachNumber = %v, want the first file's three", have)
	}
	for i := 3; i < 5; i++ {
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: Phone(i), Phone: Phone(i), Body: "Hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Skip(t.Context(), 9, "junk", "not a phone number"); err != nil {
		t.Fatal(err)
	}
	im.SetKeys("src-2", "rcp-2")
	c, err := im.ContinueInto(t.Context(), prior)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != prior.ID || c.Imported != 5 || c.Skipped != 1 || c.Source != "spring-more.csv" {
		t.Errorf("continued = id %d, %d imported, %d skipped, from %s; want %d, 5, 1, spring-more.csv", c.ID, c.Imported, c.Skipped, c.Source, prior.ID)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM campaigns WHERE text = 'Hi {{name}}'`); n != 1 {
		t.Errorf("%d campaigns of the message, want the one continued", n)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE campaign_id = ?`, prior.ID); n != 5 {
		t.Errorf("%d rows in the campaign, want 5", n)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM skipped WHERE campaign_id = ? AND input = 'junk'`, prior.ID); n != 1 ||
		CountRows(t, st, `SELECT count(*) FROM skipped WHERE campaign_id = ?`, prior.ID) != 1 {
		t.Errorf("skipped rows: want only this file's")
	}
	if n := CountRows(t, st, `SELECT count(*) FROM campaigns WHERE id = ? AND source_key = 'src-2' AND recipients_key = 'rcp-2'`, prior.ID); n != 1 {
		t.Errorf("the campaign keeps the first file's keys")
	}
	if counts, err := st.Counts(t.Context(), prior.ID); err != nil || counts[campaign.Pending] != 5 {
		t.Errorf("counts %v, %v; want 5 pending, counted once", counts, err)
	}
	if n := CountRows(t, st, `SELECT coalesce(sum(n), 0) FROM cost_counts WHERE campaign_id = ?`, prior.ID); n != 5 {
		t.Errorf("%d rows that may cost kept by prefix, want the 5, counted once", n)
	}
	if _, err := im.ContinueInto(t.Context(), prior); err == nil {
		t.Error("a second ContinueInto of one import was taken")
	}
}

// mustCampaignOf imports c with one row (line 2).
func mustCampaignOf(t *testing.T, st driver.Driver, c campaign.Campaign) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	if _, err := im.Add(t.Context(), campaign.Message{Line: 2, Input: Phone(0), Phone: Phone(0), Body: "x"}); err != nil {
		t.Fatal(err)
	}
	c, err = im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
