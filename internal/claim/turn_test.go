package claim

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// The turn is weighted fair queuing over what the store read: a higher
// class holds the claim back; within the class the campaign furthest
// behind by served/weight goes, as many tokens as keep it no further ahead
// than the next; one that comes back starts a token behind the least
// served.
func TestDecideTurn(t *testing.T) {
	normal := func(w int) campaign.Share { return campaign.Share{Priority: campaign.Normal, Weight: w} }
	tests := []struct {
		name          string
		ct            store.ClaimTurn
		wantMax       int
		wantServed    float64
		wantCompeting bool
		wantWait      time.Duration // 0: no wait
	}{
		{"alone", store.ClaimTurn{Share: normal(1), Served: 7}, 64, 7, false, 0},
		{"a higher class competes", store.ClaimTurn{Share: normal(1),
			Others: []store.Competitor{{Priority: campaign.High, Weight: 1}}}, 0, 0, false, time.Second},
		{"a lower class does not", store.ClaimTurn{Share: normal(1), Served: 3,
			Others: []store.Competitor{{Priority: campaign.Low, Served: 0, Weight: 1}}}, 64, 3, false, 0},
		{"behind: tokens up to the other's next", store.ClaimTurn{Share: normal(1), Served: 4.5,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 1, 4.5, true, 0},
		{"a heavier weight: more tokens before the other's next", store.ClaimTurn{Share: normal(2), Served: 4.5,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 3, 4.5, true, 0},
		{"ahead: the other goes first", store.ClaimTurn{Share: normal(1), Served: 9,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 0, 0, true, 100 * time.Millisecond},
		{"back after a while: a token behind the least served", store.ClaimTurn{Share: normal(1), Served: 0,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 2, 4, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decideTurn(1, tt.ct, t0, 64)
			var we *campaign.WaitError
			if tt.wantWait != 0 {
				if !errors.As(err, &we) || we.Reason != campaign.WaitPriority || !we.Until.Equal(t0.Add(tt.wantWait)) {
					t.Fatalf("turn = %+v, %v; want a wait for the priority of %v", got, err, tt.wantWait)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.max != tt.wantMax || got.served != tt.wantServed || got.competing != tt.wantCompeting {
				t.Errorf("turn: max %d, served %v, competing %v; want %d, %v, %v",
					got.max, got.served, got.competing, tt.wantMax, tt.wantServed, tt.wantCompeting)
			}
		})
	}
}
