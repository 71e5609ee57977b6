package store

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

func TestOutage(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	c := mustCampaign(t, st, "outage", 2)
	ctx := t.Context()
	if o, err := readmodel.New(st).Outage(ctx, c.ID); err != nil || !o.Since.IsZero() {
		t.Fatalf("a new campaign's outage: %+v, %v", o, err)
	}
	want := campaign.Outage{Since: t0, Error: "connection refused", NextProbe: at(4 * time.Second)}
	if err := st.SetOutage(ctx, c.ID, want, ""); err != nil {
		t.Fatal(err)
	}
	if o, err := readmodel.New(st).Outage(ctx, c.ID); err != nil || !o.Since.Equal(want.Since) || o.Error != want.Error || !o.NextProbe.Equal(want.NextProbe) {
		t.Errorf("outage %+v, %v; want %+v", o, err, want)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.State != campaign.CampaignRunning {
		t.Errorf("noting an outage changed the state to %s", got.State)
	}
	if err := st.SetOutage(ctx, c.ID, want, "outage too long"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.State != campaign.CampaignPaused || got.PauseReason != "outage too long" {
		t.Errorf("campaign %s %q, want paused for the outage", got.State, got.PauseReason)
	}
	if err := st.SetOutage(ctx, c.ID, campaign.Outage{}, ""); err != nil {
		t.Fatal(err)
	}
	if o, _ := readmodel.New(st).Outage(ctx, c.ID); !o.Since.IsZero() {
		t.Errorf("cleared outage still reads %+v", o)
	}
	if err := st.SetOutage(ctx, 999, want, ""); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("outage of a missing campaign: %v, want ErrNotFound", err)
	}
}
