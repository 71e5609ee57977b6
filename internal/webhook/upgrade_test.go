package webhook

import (
	"os"
	"testing"
	"time"
)

// TestThroughputUpgradeRaisesTheCeiling: a THROUGHPUT_UPGRADE webhook
// raises the number's throughput from Meta's default 80 to 1,000 msg/s in
// the database, which a running engine's next claim reads; it stops
// nothing.
func TestThroughputUpgradeRaisesTheCeiling(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	before, err := f.st.Account(t.Context(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if before.Throughput != 80 {
		t.Fatalf("throughput before %v, want Meta's default 80", before.Throughput)
	}
	body, err := os.ReadFile("testdata/throughput_upgrade.json")
	if err != nil {
		t.Fatal(err)
	}
	// The update names the display number only; a status webhook has
	// shown which phone number id that is.
	f.deliver(t, f.body(status{status: "sent", at: time.Second}))
	if rep := f.deliver(t, body); rep.Stopped != 0 {
		t.Errorf("stopped %d accounts, want none", rep.Stopped)
	}
	a, err := f.st.Account(t.Context(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if a.Limits.Rate != UpgradedThroughput || before.Limits.Rate != 80 {
		t.Errorf("the rate the claims use: %v before, %v after; want 80, then %d", before.Limits.Rate, a.Limits.Rate, UpgradedThroughput)
	}
	if a.Throughput != UpgradedThroughput || a.ThroughputRead != UpgradedThroughput || a.Restriction != "" {
		t.Errorf("after the upgrade: throughput %v (read %v), restriction %q; want %d and none",
			a.Throughput, a.ThroughputRead, a.Restriction, UpgradedThroughput)
	}
}
