package campaign

import (
	"reflect"
	"testing"
)

// TestAccountChangeApply: named fields change, others stay; an override
// out of its range clears it (the tier's value holds); an unknown tier
// changes nothing.
func TestAccountChangeApply(t *testing.T) {
	rate, burst, cap := 5.0, 3, 100
	base := Account{Name: "a", Tier: TierNew, PhoneNumberID: "1", Overrides: Overrides{Rate: &rate, Burst: &burst, DailyCap: &cap}}
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		ch   AccountChange
		want func(a *Account)
	}{
		{"nothing", AccountChange{}, func(*Account) {}},
		{"tier and number", AccountChange{Tier: s(TierWarm), PhoneNumberID: s("2")}, func(a *Account) { a.Tier, a.PhoneNumberID = TierWarm, "2" }},
		{"overrides set", AccountChange{Rate: f(2), Burst: i(1), DailyCap: i(0)}, func(a *Account) {
			a.Overrides = Overrides{Rate: f(2), Burst: i(1), DailyCap: i(0)}
		}},
		{"overrides cleared", AccountChange{Rate: f(0), Burst: i(0), DailyCap: i(-1)}, func(a *Account) { a.Overrides = Overrides{} }},
		{"throughput unpinned, portfolio left", AccountChange{Throughput: f(0), Portfolio: s("")}, func(*Account) {}},
		{"throughput pinned", AccountChange{Throughput: f(Unlimited)}, func(a *Account) { a.ThroughputPinned = Unlimited }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := base, base
			tt.want(&want)
			if err := tt.ch.Apply(&got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Apply = %+v\nwant %+v", got, want)
			}
		})
	}
	got := base
	if err := (AccountChange{Tier: s("gold"), PhoneNumberID: s("9")}).Apply(&got); err == nil || !reflect.DeepEqual(got, base) {
		t.Errorf("Apply with tier gold = %v, %+v; want an error and no change", err, got)
	}
}
