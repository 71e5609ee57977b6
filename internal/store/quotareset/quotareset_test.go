package quotareset

import (
	"errors"
	"reflect"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

func acct(id int64, name, day string, used int) campaign.AccountStatus {
	a := campaign.AccountStatus{QuotaDay: day, UsedToday: used}
	a.ID, a.Name, a.Limits.DailyCap = id, name, 250
	return a
}

func TestPlan(t *testing.T) {
	accts := []campaign.AccountStatus{acct(1, "a", "2026-03-01", 7), acct(2, "b", "2026-03-02", 3), acct(3, "c", "2026-03-03", 1)}
	const today = "2026-03-02"
	tests := []struct {
		name  string
		names []string
		force bool
		want  []Step
	}{
		{"all, only forward", nil, false, []Step{
			{ID: 1, To: today, QuotaReset: campaign.QuotaReset{Account: "a", Day: today, Before: 7, Reset: true, LastDay: "2026-03-01", DailyCap: 250}},
			{ID: 2, To: today, QuotaReset: campaign.QuotaReset{Account: "b", Day: today, Before: 3, LastDay: today, DailyCap: 250}},
			{ID: 3, To: "2026-03-03", QuotaReset: campaign.QuotaReset{Account: "c", Day: today, Before: 1, LastDay: "2026-03-03", DailyCap: 250, Behind: true}},
		}},
		{"named, forced: the day never moves back", []string{"c", "b"}, true, []Step{
			{ID: 2, To: today, QuotaReset: campaign.QuotaReset{Account: "b", Day: today, Before: 3, Reset: true, LastDay: today, DailyCap: 250}},
			{ID: 3, To: "2026-03-03", QuotaReset: campaign.QuotaReset{Account: "c", Day: today, Before: 1, Reset: true, LastDay: "2026-03-03", DailyCap: 250, Behind: true}},
		}},
	}
	for _, tt := range tests {
		got, err := Plan(accts, tt.names, today, tt.force)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Plan = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if _, err := Plan(accts, []string{"a", "nope"}, today, false); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("an unknown name: %v, want ErrNotFound", err)
	}
}

func TestPromote(t *testing.T) {
	rs := []campaign.QuotaReset{{Account: "a"}, {Account: "b"}}
	Promote(rs, []campaign.TierChange{{Account: "b", To: "warm"}})
	if rs[0].Promoted != nil || rs[1].Promoted == nil || rs[1].Promoted.To != "warm" {
		t.Errorf("promotions noted %+v; want b's only", rs)
	}
}
