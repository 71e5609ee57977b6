package pgstore_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// BenchmarkClaimRecord is internal/store's benchmark of that name on
// Postgres: 3 accounts on unlimited tiers, 20,000 rows claimed and their
// outcomes recorded (plain sent) in one transaction, 64 at a time, by one
// runner. Reported as wall µs per message, and the CPU µs of this process
// (the server's is not in it).
func BenchmarkClaimRecord(b *testing.B) {
	const n, batch = 20_000, 64
	ctx := b.Context()
	srv := pgtest.Start(b)
	unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var wall, cpu time.Duration
	msgs := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := pgstore.Open(ctx, srv.NewDB(b, ""), pgstore.Options{Now: func() time.Time { return t0 }, Location: time.UTC})
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
			m := campaign.Message{Line: j + 2, Input: storetest.Phone(j), Phone: storetest.Phone(j), Params: []string{fmt.Sprint("P", j)}}
			if _, err := im.Add(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		c, err := im.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		l := claim.New(st)
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		now := t0
		cs, err := l.ClaimN(ctx, c.ID, "bench", now, batch)
		for err == nil && len(cs) > 0 {
			now = now.Add(time.Millisecond)
			rs := make([]campaign.Result, len(cs))
			for k, cl := range cs {
				rs[k] = campaign.Result{Claim: cl, At: now,
					Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}}
			}
			var claimErr error
			cs, claimErr, err = l.RecordAndClaimN(ctx, "bench", rs, c.ID, now, batch)
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
