package readmodel_test

import (
	"testing"

	"github.com/wasend/wasend/internal/readmodel"
)

// TestCampaignIDPastInt4: a campaign id past 2^31 reads like any other on
// both drivers. Postgres infers int4 for a parameter compared with a bare
// integer (`$1 = 0`, the "every campaign" case) and refused such an id
// before the comparison cast it to bigint.
func TestCampaignIDPastInt4(t *testing.T) {
	const id = 1<<32 + 7
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		st := b.open(t, newFakeClock())
		seedForReads(t, st, newFakeClock())
		r := readmodel.New(st)
		if got, err := r.AccountDelivery(ctx, id); err != nil || len(got) != 0 {
			t.Errorf("AccountDelivery(%d) = %v, %v; want nothing, no error", id, got, err)
		}
		if got, err := r.Activity(ctx, t0, id); err != nil || len(got) != 0 {
			t.Errorf("Activity(%d) = %v, %v; want nothing, no error", id, got, err)
		}
		// The "every campaign" case still reads every campaign.
		if got, err := r.Activity(ctx, t0, 0); err != nil || len(got) == 0 {
			t.Errorf("Activity(0) = %v, %v; want the seeded accounts' activity", got, err)
		}
	})
}
