package storetest

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// ClaimBench is what BenchClaimRecord needs of a driver.
type ClaimBench struct {
	// Open opens a driver on a fresh, empty database whose clock is now;
	// the benchmark closes it.
	Open func(b *testing.B, now func() time.Time) store.Driver
	// Ledger puts the claim on a driver: internal/claim's New.
	Ledger func(d store.Driver) Ledger
	// Prepare, when set, runs after the import and before the timer: a
	// variant's extra state (links, suppressions) for the n recipients
	// Phone(0) … Phone(n-1).
	Prepare func(ctx context.Context, b *testing.B, d store.Driver, n int)
	// ServerCPU, when set, is the CPU time a database server has used
	// so far: reported per message beside this process's.
	ServerCPU func() time.Duration
}

// BenchClaimRecord measures the store's share of sending with the limits
// out of the way, on any driver: 3 accounts on unlimited tiers, 20,000
// rows claimed and their outcomes recorded (plain sent) in one
// transaction, 64 at a time, by one runner, as the engine's recorder does
// when the database holds sending back. Reported as wall and CPU µs per
// message (CPU: this process's user and system time, steadier than the
// wall on a shared machine; a server's own is not in it).
func BenchClaimRecord(b *testing.B, h ClaimBench) {
	const n, batch = 20_000, 64
	ctx := b.Context()
	unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
	var wall, cpu, srv time.Duration
	msgs := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st := h.Open(b, func() time.Time { return T0 })
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
			m := campaign.Message{Line: j + 2, Input: Phone(j), Phone: Phone(j), Params: []string{fmt.Sprint("P", j)}}
			if _, err := im.Add(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		c, err := im.Commit(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if h.Prepare != nil {
			h.Prepare(ctx, b, st, n)
		}
		l := h.Ledger(st)
		b.StartTimer()
		var srv0 time.Duration
		if h.ServerCPU != nil {
			srv0 = h.ServerCPU()
		}
		start, cpu0 := time.Now(), CPUTime()
		now := T0
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
				break // the last claim finds none left; a count short below says otherwise
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += CPUTime() - cpu0
		if h.ServerCPU != nil {
			srv += h.ServerCPU() - srv0
		}
		b.StopTimer()
		if msgs != n*(i+1) {
			b.Fatalf("recorded %d messages, want %d", msgs, n*(i+1))
		}
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(wall.Microseconds())/float64(msgs), "µs/msg")
	b.ReportMetric(float64(cpu.Microseconds())/float64(msgs), "cpu-µs/msg")
	if h.ServerCPU != nil {
		b.ReportMetric(float64(srv.Microseconds())/float64(msgs), "srv-cpu-µs/msg")
	}
}

// CPUTime is the CPU time this process has used, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
