package claim

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
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
		ct            driver.ClaimTurn
		wantMax       int
		wantServed    float64
		wantCompeting bool
		wantWait      time.Duration // 0: no wait
		wantOnly      []int64       // nil: every account of mine (1 and 2)
	}{
		{"alone", driver.ClaimTurn{Share: normal(1), Served: 7}, 64, 7, false, 0, nil},
		{"a higher class competes", driver.ClaimTurn{Share: normal(1),
			Others: []driver.Competitor{{Priority: campaign.High, Weight: 1}}}, 0, 0, false, time.Second, nil},
		{"a lower class does not", driver.ClaimTurn{Share: normal(1), Served: 3,
			Others: []driver.Competitor{{Priority: campaign.Low, Served: 0, Weight: 1}}}, 64, 3, false, 0, nil},
		{"behind: tokens up to turnLag ahead of the other", driver.ClaimTurn{Share: normal(1), Served: 4.5,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, turnLag, 4.5, true, 0, nil},
		{"a heavier weight: more tokens before the lag", driver.ClaimTurn{Share: normal(2), Served: 4.5,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 2*turnLag + 1, 4.5, true, 0, nil},
		{"the least of several others bounds it", driver.ClaimTurn{Share: normal(1), Served: 6,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 9, Weight: 1}, {Priority: campaign.Normal, Served: 5, Weight: 3}}}, turnLag - 1, 6, true, 0, nil},
		{"ahead within the lag: the rest of it", driver.ClaimTurn{Share: normal(1), Served: 9,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, turnLag - 4, 9, true, 0, nil},
		{"ahead by the lag: the other goes first", driver.ClaimTurn{Share: normal(1), Served: 5 + turnLag,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 0, 0, true, turnWait, nil},
		{"behind all along: keeps what it is owed", driver.ClaimTurn{Share: normal(1), Served: 5 - turnLag,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}}}, 2 * turnLag, 5 - turnLag, true, 0, nil},
		{"back from further behind: a token behind the least served", driver.ClaimTurn{Share: normal(1), Served: 0,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5 + turnLag, Weight: 1}}}, turnLag + 1, 4 + turnLag, true, 0, nil},
		{"a higher class on other numbers does not hold it back", driver.ClaimTurn{Share: normal(1), Served: 3,
			Others: []driver.Competitor{{Priority: campaign.High, Weight: 1, Excluded: []int64{1, 2}}}}, 64, 3, false, 0, nil},
		{"a higher class on one of them: the other", driver.ClaimTurn{Share: normal(1), Served: 3,
			Others: []driver.Competitor{{Priority: campaign.High, Weight: 1, Excluded: []int64{2}}}}, 64, 3, false, 0, []int64{2}},
		{"ahead by the lag of one that may not use 2: 2's tokens, not booked", driver.ClaimTurn{Share: normal(1), Served: 5 + turnLag,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1, Excluded: []int64{2}}}}, 64, 5 + turnLag, false, 0, []int64{2}},
		{"ahead by the lag of one that may use both: waits though a third may not use 2", driver.ClaimTurn{Share: normal(1), Served: 5 + turnLag,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1}, {Priority: campaign.Normal, Served: 5, Weight: 1, Excluded: []int64{2}}}},
			0, 0, true, turnWait, nil},
		{"one of the class on other numbers does not compete", driver.ClaimTurn{Share: normal(1), Served: 50,
			Others: []driver.Competitor{{Priority: campaign.Normal, Served: 5, Weight: 1, Excluded: []int64{1, 2, 3}}}}, 64, 50, false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decideTurn(1, tt.ct, []int64{1, 2}, t0, 64)
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
			if got.max != tt.wantMax || got.served != tt.wantServed || got.competing != tt.wantCompeting || !slices.Equal(got.only, tt.wantOnly) {
				t.Errorf("turn: max %d, served %v, competing %v, only %v; want %d, %v, %v, %v",
					got.max, got.served, got.competing, got.only, tt.wantMax, tt.wantServed, tt.wantCompeting, tt.wantOnly)
			}
		})
	}
}
