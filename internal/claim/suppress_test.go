package claim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// recipientsCampaign imports one row per recipient key (a number or a
// user id), in order.
func recipientsCampaign(t *testing.T, st *store.Store, name string, spec campaign.Spec, keys ...string) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name + ".csv", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i, k := range keys {
		m := campaign.Message{Line: i + 2, Input: k, Phone: k, Params: []string{fmt.Sprint("P", i)}, Body: spec.Text}
		if reason, err := im.Add(t.Context(), m); err != nil || reason != "" {
			t.Fatalf("add line %d: %q, %v", m.Line, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// learnLinks stores phone ↔ user id links as a webhook body teaches them.
func learnLinks(t *testing.T, st *store.Store, links ...campaign.IdentityLink) {
	t.Helper()
	if err := st.WithInbox(t.Context(), func(tx driver.InboxTx, now time.Time) error {
		return tx.LearnLinks(t.Context(), links, now)
	}); err != nil {
		t.Fatal(err)
	}
}

var template = campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}}

// TestClaimSuppressionFollowsLinks: a person suppressed after the import
// is suppressed at the claim whichever of their number or user id the
// list and the row name — a campaign imported by phone stops for the
// person whose user id said STOP later, and the reverse. People not
// linked to a listed id are sent to.
func TestClaimSuppressionFollowsLinks(t *testing.T) {
	const (
		ana = "US.13491208655302741918" // linked to phone(0)
		ben = "GB.77"                   // linked to phone(1)
		cy  = "DE.55"                   // linked to phone(2), nobody listed
		dan = "FR.9"                    // no link
	)
	for _, tc := range []struct {
		name       string
		rows       []string
		suppressed []string
		wantSent   []string
		wantFailed []string
	}{
		{name: "a row by number, the user id listed", rows: []string{phone(0), phone(2)}, suppressed: []string{ana},
			wantSent: []string{phone(2)}, wantFailed: []string{phone(0)}},
		{name: "a row by user id, the number listed", rows: []string{ben, cy}, suppressed: []string{phone(1)},
			wantSent: []string{cy}, wantFailed: []string{ben}},
		{name: "listed as the row names them", rows: []string{dan, phone(3)}, suppressed: []string{dan, phone(3)},
			wantFailed: []string{dan, phone(3)}},
		{name: "nobody linked is listed", rows: []string{phone(2), cy, dan, phone(4)}, suppressed: []string{ana, phone(1)},
			wantSent: []string{phone(2), cy, dan, phone(4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierNew, fast)
			c := recipientsCampaign(t, st, "linked", template, tc.rows...)
			learnLinks(t, st, campaign.IdentityLink{Phone: phone(0), UserID: ana}, campaign.IdentityLink{Phone: phone(1), UserID: ben},
				campaign.IdentityLink{Phone: phone(2), UserID: cy})
			var list []campaign.Suppression
			for _, p := range tc.suppressed {
				list = append(list, campaign.Suppression{Phone: p, Reason: "STOP"})
			}
			if _, err := st.Suppress(t.Context(), list); err != nil {
				t.Fatal(err)
			}
			cs, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 10)
			if len(tc.wantSent) == 0 {
				if err != campaign.ErrDone {
					t.Fatalf("ClaimN = %d claims, %v; want ErrDone", len(cs), err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, cl := range cs {
				sent = append(sent, cl.Message.Phone)
			}
			if !slices.Equal(sent, tc.wantSent) {
				t.Errorf("claimed %v, want %v", sent, tc.wantSent)
			}
			for _, p := range tc.wantFailed {
				if n := countRows(t, st, `SELECT count(*) FROM messages WHERE phone = ? AND state = 'failed' AND error_code = ?
					AND error_message = 'suppressed: STOP'`, p, campaign.CodeSuppressed); n != 1 {
					t.Errorf("the row of %s is not failed as suppressed", p)
				}
			}
			checkCounts(t, st, tc.name, c.ID)
		})
	}
}
