package dispatch_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// BenchmarkSendUnlimited measures end-to-end sending with limits out of the
// way: 3 accounts on unlimited tiers, a real sandbox over loopback HTTP,
// every claim and outcome committed to SQLite. Reported as msgs/s, and as
// goroutine wakes per message (the sandbox's included), which a loaded
// machine does not blur as it does the rate.
func BenchmarkSendUnlimited(b *testing.B) { benchSendUnlimited(b, nil) }

// benchSendUnlimited runs the benchmark; share, when set, is called on
// each fresh store once its accounts exist (the shared-limits variant
// attaches Redis there), with the accounts' names in the gate.
func benchSendUnlimited(b *testing.B, share func(st *store.Store, gateNames []string)) {
	const n = 5_000
	ctx := context.Background()
	box := sandbox.New(sandbox.Options{Throughput: -1, PairInterval: -1})
	srv := httptest.NewServer(box)
	defer srv.Close()
	client := whatsapp.New(whatsapp.Config{BaseURL: srv.URL})
	var csv strings.Builder
	csv.WriteString("phone,name\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "+49151%08d,P%d\n", 10000000+i, i)
	}
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: sandbox.DemoTemplate, Lang: "en_US", Params: []string{"name"}}
	unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
	sent := 0
	var wakes uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), driver.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var names []string
		for _, tier := range campaign.TierNames {
			if err := st.SetTier(ctx, tier, unlimited); err != nil {
				b.Fatal(err)
			}
			if _, err := st.AddAccount(ctx, campaign.Account{Name: tier, PhoneNumberID: "10" + tier, Tier: tier, TokenEnv: "T",
				ThroughputPinned: campaign.Unlimited}); err != nil {
				b.Fatal(err)
			}
			names = append(names, driver.GateAccount("10"+tier))
		}
		if share != nil {
			share(st, names)
		}
		c, _, err := runner.Import(ctx, st, strings.NewReader(csv.String()), "bench.csv",
			campaign.Campaign{Name: "bench", Fingerprint: fmt.Sprint(i), Source: "bench.csv", Spec: spec}, "")
		if err != nil {
			b.Fatal(err)
		}
		eng, err := dispatch.New(dispatch.Options{
			Campaign: c, Ledger: claim.New(st), Sender: client, Policy: dispatch.Policy{Workers: 64},
			Token:  func(string) (string, error) { return "t", nil },
			Runner: campaign.Runner{ID: "bench", Host: "bench", PID: 1}, Poll: time.Second,
		})
		if err != nil {
			b.Fatal(err)
		}
		w0 := schedules()
		b.StartTimer()
		if err := eng.Run(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		wakes += schedules() - w0
		counts, _ := st.Counts(ctx, c.ID)
		if counts[campaign.Sent] != n {
			b.Fatalf("sent %d, want %d", counts[campaign.Sent], n)
		}
		sent += n
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(wakes)/float64(sent), "wakes/msg")
}

// schedules estimates how many times goroutines of this process were made
// to run so far (every wake-up after a park, and every start): the runtime
// times one transition in eight of each goroutine into its histogram.
func schedules() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return 8 * n
}
