package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestSuppressedRowsFinish: numbers put on the suppression list after the
// import fail as suppressed and the campaign finishes — whether every row is
// suppressed or a block of them, longer than a claim batch, sits at the head
// of the queue. Before, the engine re-claimed them forever at full CPU.
func TestSuppressedRowsFinish(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, head int // head: the first rows put on the list
	}{
		{"the only row", 1, 1},
		{"every row", 12, 12},
		{"a block of 3×workers at the head", 20, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
			e.addAccount("a", "1001", campaign.TierActive)
			c := e.importN(tc.rows)
			var list []campaign.Suppression
			for i := range tc.head {
				list = append(list, campaign.Suppression{Phone: fmtPhone(i), Reason: "STOP"})
			}
			if _, err := e.st.Suppress(e.ctx, list); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
			defer cancel()
			if err := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 4}}).Run(ctx); err != nil {
				t.Fatalf("Run: %v, want the campaign finished", err)
			}
			got, err := e.st.Campaign(e.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			counts, err := e.st.Counts(e.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != campaign.CampaignFinished || counts[campaign.Failed] != tc.head || counts[campaign.Sent] != tc.rows-tc.head {
				t.Errorf("campaign %s, counts %v; want finished, %d failed, %d sent", got.State, counts, tc.head, tc.rows-tc.head)
			}
			for phone, r := range e.rows() {
				if r.state == campaign.Failed && r.errorCode.Int64 != campaign.CodeSuppressed {
					t.Errorf("%s: %+v, want error code %d", phone, r, campaign.CodeSuppressed)
				}
			}
			if n := len(e.box.Records()); n != tc.rows-tc.head {
				t.Errorf("%d requests, want %d: none to a suppressed number", n, tc.rows-tc.head)
			}
		})
	}
}
