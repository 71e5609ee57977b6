package pgstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// An import of more rows than one COPY batch, with skips, becomes one
// campaign whose rows are counted pending; nothing is visible before
// Commit, a rolled-back import leaves nothing, and the same fingerprint
// again is driver.ErrExists.
func TestImportCommitCounts(t *testing.T) {
	ctx := t.Context()
	db := newDB(t)
	st, err := pgstore.Open(ctx, db, pgstore.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"},
		Header: &campaign.Header{Type: campaign.HeaderType("image"), Column: "pic"}}
	begin := func(name string) driver.Importer {
		t.Helper()
		im, err := st.Import(ctx, campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name + ".csv", Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return im
	}

	gone := begin("gone")
	if _, err := gone.AddBatch(ctx, []campaign.Message{{Line: 2, Input: "+4915100000001", Phone: "+4915100000001"}}); err != nil {
		t.Fatal(err)
	}
	gone.Rollback()

	const n = driver.ImportBatch + 10
	im := begin("spring")
	defer im.Rollback()
	var msgs []campaign.Message
	for i := range n {
		p := fmt.Sprintf("+49151%08d", i)
		msgs = append(msgs, campaign.Message{Line: i + 2, Input: p, Phone: p, Params: []string{fmt.Sprint("P", i)}, Header: "https://x/" + p})
	}
	if _, err := im.AddBatch(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if err := im.SkipBatch(ctx, []campaign.Skip{{Line: n + 2, Input: "nope", Reason: "not a number"}}); err != nil {
		t.Fatal(err)
	}
	// The campaigns visible from another connection (a SELECT's tag
	// counts its rows).
	campaigns := func() (int64, error) { return exec(ctx, db, `SELECT id FROM campaigns`) }
	if n, err := campaigns(); err != nil || n != 0 {
		t.Fatalf("before commit: %d campaigns, %v; want none visible", n, err)
	}
	im.SetKeys("src-key", "rcpt-key")
	c, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}

	got, err := st.Campaign(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "spring" || got.Imported != n || got.Skipped != 1 || got.State != campaign.CampaignRunning ||
		got.Spec.Header == nil || got.Spec.Header.Column != "pic" || len(got.Spec.Params) != 1 {
		t.Errorf("campaign read back: %+v", got)
	}
	if bySrc, err := st.CampaignBySource(ctx, "src-key"); err != nil || bySrc.ID != c.ID {
		t.Errorf("CampaignBySource = %d, %v; want %d", bySrc.ID, err, c.ID)
	}
	counts, err := st.Counts(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[campaign.Pending] != n {
		t.Errorf("counts %v, want %d pending", counts, n)
	}
	if n, err := campaigns(); err != nil || n != 1 {
		t.Errorf("%d campaigns, %v; want the committed one only", n, err)
	}
	if _, err := st.Campaign(ctx, c.ID+100); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("a campaign that does not exist: %v, want ErrNotFound", err)
	}
	if err := st.CampaignStopped(ctx, c.ID); err != nil {
		t.Errorf("CampaignStopped of a running campaign: %v, want nil", err)
	}
	for _, tc := range []struct {
		set  string
		want error
	}{
		{`UPDATE campaigns SET state = 'paused' WHERE id = $1`, campaign.ErrPaused},
		{`UPDATE campaigns SET state = 'finished', cancelled_at = 1 WHERE id = $1`, campaign.ErrCancelled},
	} {
		if _, err := exec(ctx, db, tc.set, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.CampaignStopped(ctx, c.ID); !errors.Is(err, tc.want) {
			t.Errorf("CampaignStopped after %s: %v, want %v", tc.set, err, tc.want)
		}
	}
	if err := st.CampaignStopped(ctx, c.ID+100); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("CampaignStopped of no campaign: %v, want ErrNotFound", err)
	}
	if _, err := st.Import(ctx, campaign.Campaign{Name: "again", Fingerprint: "fp-spring", Source: "x.csv", Spec: spec}); !errors.Is(err, driver.ErrExists) {
		t.Errorf("same fingerprint again: %v, want driver.ErrExists", err)
	}
}
