package store

import (
	"errors"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

func testCampaign(fp string) campaign.Campaign {
	return campaign.Campaign{
		Name: "spring", Fingerprint: fp, Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "Hi {{name}}"},
	}
}

func TestImportRollbackLeavesNothing(t *testing.T) {
	st := openTest(t, newFakeClock())
	im, err := st.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: phone(i), Phone: phone(i), Body: "Hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := im.Skip(t.Context(), 5, "garbage", "not a phone number"); err != nil {
		t.Fatal(err)
	}
	im.Rollback()
	im.Rollback() // safe twice

	cs, err := st.Campaigns(t.Context())
	if err != nil || len(cs) != 0 {
		t.Errorf("campaigns after rollback = %+v, %v; want none", cs, err)
	}
	for _, table := range []string{"campaigns", "messages", "skipped"} {
		if n := countRows(t, st, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%s has %d rows after rollback", table, n)
		}
	}
	if _, err := im.Commit(t.Context()); err == nil {
		t.Errorf("Commit after Rollback succeeded")
	}
	// The write lock was released: other writes and a new import proceed.
	mustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	if c := mustCampaign(t, st, "again", 2); c.Imported != 2 {
		t.Errorf("second import: %+v", c)
	}
}

func TestImportCommit(t *testing.T) {
	st := openTest(t, newFakeClock())
	im, err := st.Import(t.Context(), testCampaign("fp"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	rows := []struct {
		line  int
		input string
		phone string
		skip  string // the screen's reason (internal/screen); "" stores the row
	}{
		{2, "0151 00000001", phone(1), ""},
		{3, phone(2), phone(2), ""},
		{4, "+49 151 00000001", phone(1), "duplicate of line 2 (" + phone(1) + ")"},
		{5, phone(50), phone(50), "suppressed: STOP received"},
		{6, phone(51), phone(51), "suppressed: opted out"},
		{7, phone(3), phone(3), ""},
		{8, phone(2), phone(2), "duplicate of line 3 (" + phone(2) + ")"},
	}
	var wantSkipped []campaign.Skip
	for _, r := range rows {
		if reason := r.skip; reason != "" {
			if err := im.Skip(t.Context(), r.line, r.input, reason); err != nil {
				t.Fatal(err)
			}
			wantSkipped = append(wantSkipped, campaign.Skip{Line: r.line, Input: r.input, Reason: reason})
			continue
		}
		if _, err := im.Add(t.Context(), campaign.Message{Line: r.line, Input: r.input, Phone: r.phone, Body: "Hi"}); err != nil {
			t.Fatalf("line %d: %v", r.line, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	im.Rollback() // safe after Commit
	if c.ID == 0 || c.Imported != 3 || c.Skipped != 4 || c.State != campaign.CampaignRunning {
		t.Errorf("committed campaign = %+v, want 3 imported, 4 skipped, running", c)
	}
	stored, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Imported != 3 || stored.Skipped != 4 || stored.Spec.Text != "Hi {{name}}" || !stored.CreatedAt.Equal(t0) {
		t.Errorf("stored campaign = %+v", stored)
	}
	counts, err := st.Counts(t.Context(), c.ID)
	if err != nil || counts[campaign.Pending] != 3 || counts.Total() != 3 {
		t.Errorf("counts = %v, %v; want 3 pending", counts, err)
	}
	skipped, err := readmodel.New(st).Skipped(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != len(wantSkipped) {
		t.Fatalf("skipped = %+v, want %+v", skipped, wantSkipped)
	}
	for i := range skipped {
		if skipped[i] != wantSkipped[i] {
			t.Errorf("skipped[%d] = %+v, want %+v", i, skipped[i], wantSkipped[i])
		}
	}
	if byFP, err := st.CampaignByFingerprint(t.Context(), "fp"); err != nil || byFP.ID != c.ID {
		t.Errorf("by fingerprint: %+v, %v", byFP, err)
	}

	// The same file and message again is the same campaign, not a new one.
	if _, err := st.Import(t.Context(), testCampaign("fp")); !errors.Is(err, ErrExists) {
		t.Errorf("second import with the same fingerprint: err = %v, want ErrExists", err)
	}
	mustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{}) // the lock was released
}
