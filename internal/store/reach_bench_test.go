package store

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// BenchmarkClaimReachWindow measures one claim (64 new recipients) of a
// limited portfolio of two numbers whose 24 h window already holds 1,000
// or 1,000,000 recipients, spread over the window, the limit far off. A
// claim reads the portfolio's running count moved on by the recipients who
// left the window since the last claim, so both sizes should cost the
// same. Reported as wall and CPU µs per claim.
//
//	go test ./internal/store/ -run '^$' -bench ClaimReachWindow -benchtime 2000x
func BenchmarkClaimReachWindow(b *testing.B) {
	for _, window := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			const batch = 64
			ctx := b.Context()
			clk := newFakeClock()
			st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), driver.Options{Now: clk.Now, Location: time.UTC})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
			if err := st.SetTier(ctx, campaign.TierActive, unlimited); err != nil {
				b.Fatal(err)
			}
			if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: "big", PinnedLimit: 4_000_000}); err != nil {
				b.Fatal(err)
			}
			big := "big"
			for _, name := range []string{"one", "two"} {
				if _, err := st.AddAccount(ctx, campaign.Account{Name: name, PhoneNumberID: "10" + name, Tier: campaign.TierActive,
					TokenEnv: "T", ThroughputPinned: campaign.Unlimited}); err != nil {
					b.Fatal(err)
				}
				if _, err := st.UpdateAccount(ctx, name, campaign.AccountChange{Portfolio: &big}); err != nil {
					b.Fatal(err)
				}
			}
			// The window: the recipients' latest sends, oldest a second
			// inside it, newest now, from either number.
			now := t0
			step := int64((ratelimit.ReachWindow - time.Second) / time.Duration(window))
			if _, err := st.db.ExecContext(ctx, `INSERT INTO contact_log (phone, account_id, last_at, sent_at)
				WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
				SELECT printf('+4917%09d', i), 1 + i % 2, ? - (? - i) * ?, ? - (? - i) * ? FROM k`,
				window, now.UnixNano(), window, step, now.UnixNano(), window, step); err != nil {
				b.Fatal(err)
			}
			rows := batch * (b.N + 1)
			im, err := st.Import(ctx, campaign.Campaign{Name: "reach", Fingerprint: "fp-reach", Source: "reach.csv",
				Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}}})
			if err != nil {
				b.Fatal(err)
			}
			for j := range rows {
				m := campaign.Message{Line: j + 2, Input: phone(j), Phone: phone(j), Params: []string{"P"}}
				if _, err := im.Add(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
			c, err := im.Commit(ctx)
			if err != nil {
				b.Fatal(err)
			}
			// The first claim builds the count from the log, once.
			if cs, err := st.ClaimN(ctx, c.ID, "bench", now, batch); err != nil || len(cs) != batch {
				b.Fatalf("first claim: %d rows, %v", len(cs), err)
			}
			var used int
			if err := st.db.QueryRowContext(ctx, `SELECT used FROM reach_counts`).Scan(&used); err != nil || used != window+batch {
				b.Fatalf("running count %d, %v; want %d", used, err, window+batch)
			}
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			for range b.N {
				now = now.Add(time.Millisecond)
				cs, err := st.ClaimN(ctx, c.ID, "bench", now, batch)
				if err != nil || len(cs) != batch {
					b.Fatalf("claim: %d rows, %v", len(cs), err)
				}
			}
			wall, cpu := time.Since(start), cpuTime()-cpu0
			b.StopTimer()
			b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "µs/claim")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/claim")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
