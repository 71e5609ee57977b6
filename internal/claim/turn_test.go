package claim

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// The turn is weighted fair queuing over what the store read: a higher
// class holds the claim back; within the class a campaign takes tokens as
// long as it stays within turnLag of the least served by served/weight,
// and waits past it; one that comes back from further behind starts a
// token behind the least served, one that competed all along keeps what
// it is owed.
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
		{"behind: tokens up to turnLag ahead of the other", store.ClaimTurn{Share: normal(1), Served: 4.5,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, turnLag, 4.5, true, 0},
		{"a heavier weight: more tokens before the lag", store.ClaimTurn{Share: normal(2), Served: 4.5,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 2*turnLag + 1, 4.5, true, 0},
		{"the least of several others bounds it", store.ClaimTurn{Share: normal(1), Served: 6,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 9, Weight: 1}, {Priority: campaign.Normal, Served: 5, Weight: 3}}}, turnLag - 1, 6, true, 0},
		{"ahead within the lag: the rest of it", store.ClaimTurn{Share: normal(1), Served: 9,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, turnLag - 4, 9, true, 0},
		{"ahead by the lag: the other goes first", store.ClaimTurn{Share: normal(1), Served: 5 + turnLag,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 0, 0, true, turnWait},
		{"behind all along: keeps what it is owed", store.ClaimTurn{Share: normal(1), Served: 5 - turnLag,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 2 * turnLag, 5 - turnLag, true, 0},
		{"back from further behind: a token behind the least served", store.ClaimTurn{Share: normal(1), Served: 0,
			Others: []store.Competitor{{Priority: campaign.Normal, Served: 5 + turnLag, Weight: 1}}}, turnLag + 1, 4 + turnLag, true, 0},
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
