package store

import (
	"reflect"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// TestTemplateShapeRoundTrip stores a campaign with every template shape
// and reads back its spec (by id, by fingerprint, in the list) and a
// claimed row's header and button values.
func TestTemplateShapeRoundTrip(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	spec := campaign.Spec{
		Kind: campaign.KindTemplate, Template: "order_update", Lang: "en_US",
		Params: []string{"customer_name", "order_id"}, NamedParams: true,
		Header:  &campaign.Header{Type: campaign.HeaderImage, Column: "banner"},
		Buttons: []campaign.Button{{Index: 0, Column: "track"}, {Index: 2, Column: "review"}},
	}
	im, err := st.Import(t.Context(), campaign.Campaign{Name: "shape", Fingerprint: "fp-shape", Source: "shape.csv", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	want := campaign.Message{Line: 2, Input: phone(1), Phone: phone(1), Params: []string{"Ana", "1234"},
		Header: "https://example.com/a.jpg", Buttons: []string{"t/1234", "r/1234"}}
	if reason, err := im.Add(t.Context(), want); err != nil || reason != "" {
		t.Fatalf("Add = %q, %v", reason, err)
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	byID, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	byFP, err := st.CampaignByFingerprint(t.Context(), "fp-shape")
	if err != nil {
		t.Fatal(err)
	}
	list, err := readmodel.New(st).Campaigns(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("Campaigns = %+v, %v", list, err)
	}
	for what, got := range map[string]campaign.Spec{"Campaign": byID.Spec, "CampaignByFingerprint": byFP.Spec, "Campaigns": list[0].Spec} {
		if !reflect.DeepEqual(got, spec) {
			t.Errorf("%s spec = %+v, want %+v", what, got, spec)
		}
	}

	cl, err := st.Claim(t.Context(), c.ID, "r1", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := cl.Message
	if got.Header != want.Header || !reflect.DeepEqual(got.Buttons, want.Buttons) || !reflect.DeepEqual(got.Params, want.Params) {
		t.Errorf("claimed message = %+v, want header %q buttons %q params %q", got, want.Header, want.Buttons, want.Params)
	}
}

// TestTemplateShapeDefaults: a campaign and rows without the new shape read
// back as before, with no header, buttons or named parameters.
func TestTemplateShapeDefaults(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "plain", 1)
	if got := countRows(t, st, `SELECT count(*) FROM campaigns WHERE shape = '{}'`); got != 1 {
		t.Errorf("campaigns with shape '{}' = %d, want 1", got)
	}
	if got := countRows(t, st, `SELECT count(*) FROM messages WHERE extras = '{}'`); got != 1 {
		t.Errorf("messages with extras '{}' = %d, want 1", got)
	}
	back, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.NamedParams || back.Spec.Header != nil || back.Spec.Buttons != nil {
		t.Errorf("spec = %+v, want no template shape", back.Spec)
	}
	cl, err := st.Claim(t.Context(), c.ID, "r1", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cl.Message.Header != "" || cl.Message.Buttons != nil {
		t.Errorf("message = %+v, want no header or buttons", cl.Message)
	}
}
