package store

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// BenchmarkClaimRecord measures the store's share of sending with the
// limits out of the way: 3 accounts on unlimited tiers, 20,000 rows claimed
// and their outcomes recorded (plain sent) in one transaction, 64 at a
// time, as the engine's recorder does when the database holds sending
// back. Reported as wall and CPU µs per message (CPU: the process's user
// and system time, steadier than the wall on a shared machine).
func BenchmarkClaimRecord(b *testing.B) { benchClaimRecord(b, false) }

// BenchmarkClaimRecordLinked is BenchmarkClaimRecord with every recipient
// linked to a user id (recipient_links) and as many other people's links
// and suppressed user ids beside them: the suppression check at each claim
// follows the links.
func BenchmarkClaimRecordLinked(b *testing.B) { benchClaimRecord(b, true) }

func benchClaimRecord(b *testing.B, linked bool) {
	const n, batch = 20_000, 64
	ctx := b.Context()
	unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
	var wall, cpu time.Duration
	msgs := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clk := newFakeClock()
		st, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), driver.Options{Now: clk.Now, Location: time.UTC})
		if err != nil {
			b.Fatal(err)
		}
		for _, tier := range campaign.TierNames {
			if err := st.SetTier(ctx, tier, unlimited); err != nil {
				b.Fatal(err)
			}
			if _, err := st.AddAccount(ctx, campaign.Account{Name: tier, PhoneNumberID: "10" + tier, Tier: tier,
				TokenEnv: "T", ThroughputPinned: campaign.Unlimited}); err != nil {
				b.Fatal(err)
			}
		}
		im, err := st.Import(ctx, campaign.Campaign{Name: "bench", Fingerprint: fmt.Sprint("fp", i), Source: "bench.csv",
			Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}}})
		if err != nil {
			b.Fatal(err)
		}
		for j := range n {
			m := campaign.Message{Line: j + 2, Input: phone(j), Phone: phone(j), Params: []string{fmt.Sprint("P", j)}}
			if _, err := im.Add(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		c, err := im.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if linked {
			// Each recipient has a user id; as many others do too, half of
			// them suppressed by it.
			var list []campaign.Suppression
			for j := range 2 * n {
				user := fmt.Sprintf("US.%d", 1000+j)
				if _, err := st.db.ExecContext(ctx, `INSERT INTO recipient_links (user_id, phone, seen_at) VALUES (?, ?, 0)`, user, phone(j)); err != nil {
					b.Fatal(err)
				}
				if j >= n && j%2 == 0 {
					list = append(list, campaign.Suppression{Phone: user, Reason: "STOP"})
				}
			}
			if _, err := st.Suppress(ctx, list); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		now := t0
		cs, err := st.ClaimN(ctx, c.ID, "bench", now, batch)
		for err == nil && len(cs) > 0 {
			now = now.Add(time.Millisecond)
			rs := make([]campaign.Result, len(cs))
			for k, cl := range cs {
				rs[k] = campaign.Result{Claim: cl, At: now,
					Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}}
			}
			var claimErr error
			cs, claimErr, err = st.RecordAndClaimN(ctx, "bench", rs, c.ID, now, batch)
			msgs += len(rs)
			if claimErr != nil {
				break
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		if msgs != n*(i+1) {
			b.Fatalf("recorded %d messages, want %d", msgs, n*(i+1))
		}
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(wall.Microseconds())/float64(msgs), "µs/msg")
	b.ReportMetric(float64(cpu.Microseconds())/float64(msgs), "cpu-µs/msg")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
