package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// ClaimBench is what BenchClaimRecord needs of a driver.
type ClaimBench struct {
	// NewDB makes a fresh, empty database and says where it is.
	NewDB func(b *testing.B) string
	// Open opens a driver on the database at db whose clock is now, as a
	// process does; the benchmark closes it.
	Open func(b *testing.B, db string, now func() time.Time) driver.Driver
	// Ledger puts the claim on a driver: internal/claim's New.
	Ledger func(d driver.Driver) Ledger
	// Prepare, when set, runs after the import and before the timer: a
	// variant's extra state (links, suppressions) for the n recipients
	// Phone(0) … Phone(n-1).
	Prepare func(ctx context.Context, b *testing.B, d driver.Driver, n int)
	// ServerCPU, when set, is the CPU time a database server has used
	// so far: reported per message beside this process's.
	ServerCPU func() time.Duration
	// Hosts is how many handles (0: one) claim the campaign at once, each
	// opened on its own as another host's process would, each with its
	// own runner.
	Hosts int
	// Starts, when set, marks every claimed row's request started before
	// its outcome is recorded, as the engine does: the rows claimed along
	// with outcomes in their claim's transaction (Claim.Started), the
	// others by driver.Driver's Start, Starts rows a transaction.
	Starts int
	// Batch is how many rows a transaction claims and records (0: 64).
	Batch int
}

// BenchClaimRecord measures the store's share of sending with the limits
// out of the way, on any driver: 3 accounts on unlimited tiers, 20,000
// rows claimed and their outcomes recorded (plain sent) in one
// transaction, 64 at a time, by one runner or by Hosts at once, as the
// engine's recorder does when the database holds sending back. Reported
// as wall and CPU µs per message (CPU: this process's user and system
// time, steadier than the wall on a shared machine; a server's own is
// not in it) and claims per second (a claim is a row).
func BenchClaimRecord(b *testing.B, h ClaimBench) {
	const n = 20_000
	batch := h.Batch
	if batch == 0 {
		batch = 64
	}
	ctx := b.Context()
	unlimited := campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}
	hosts := max(h.Hosts, 1)
	var wall, cpu, srv time.Duration
	msgs := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// One clock for every host: each batch a millisecond on.
		var ticks atomic.Int64
		now := func() time.Time { return T0.Add(time.Duration(ticks.Load()) * time.Millisecond) }
		db := h.NewDB(b)
		st := h.Open(b, db, now)
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
		handles := []driver.Driver{st}
		for range hosts - 1 {
			handles = append(handles, h.Open(b, db, now))
		}
		var (
			wg      sync.WaitGroup
			done    atomic.Int64
			errs    = make([]error, hosts)
			srv0    time.Duration
			started = make(chan struct{})
		)
		for k, d := range handles {
			l, runner := h.Ledger(d), fmt.Sprint("bench-", k+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-started
				errs[k] = claimRecord(ctx, l, d, h.Starts, runner, c.ID, batch, now, &ticks, &done)
			}()
		}
		b.StartTimer()
		if h.ServerCPU != nil {
			srv0 = h.ServerCPU()
		}
		start, cpu0 := time.Now(), CPUTime()
		close(started)
		wg.Wait()
		wall += time.Since(start)
		cpu += CPUTime() - cpu0
		if h.ServerCPU != nil {
			srv += h.ServerCPU() - srv0
		}
		b.StopTimer()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		msgs += int(done.Load())
		if msgs != n*(i+1) {
			b.Fatalf("recorded %d messages, want %d", msgs, n*(i+1))
		}
		for _, d := range handles {
			d.Close()
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(wall.Microseconds())/float64(msgs), "µs/msg")
	b.ReportMetric(float64(msgs)/wall.Seconds(), "claims/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(msgs), "cpu-µs/msg")
	if h.ServerCPU != nil {
		b.ReportMetric(float64(srv.Microseconds())/float64(msgs), "srv-cpu-µs/msg")
	}
}

// claimRecord is one host's loop: claim, mark the requests started
// (starts rows a transaction; 0: not), record the batch as sent and claim
// the next in one transaction, until none is left; done counts the rows
// recorded.
func claimRecord(ctx context.Context, l Ledger, d driver.Driver, starts int, runner string, id int64, batch int, now func() time.Time,
	ticks, done *atomic.Int64) error {
	cs, err := l.ClaimN(ctx, id, runner, now(), batch)
	for err == nil && len(cs) > 0 {
		ticks.Add(1)
		at := now()
		rest := slices.DeleteFunc(slices.Clone(cs), func(c campaign.Claim) bool { return c.Started })
		for starts > 0 && len(rest) > 0 {
			n := min(starts, len(rest))
			refused, err := d.Start(ctx, runner, rest[:n], at)
			if err != nil {
				return fmt.Errorf("start %d requests: %w", n, err)
			}
			if len(refused) > 0 {
				return fmt.Errorf("start %d requests: %d refused", n, len(refused))
			}
			rest = rest[n:]
		}
		rs := make([]campaign.Result, len(cs))
		for k, cl := range cs {
			rs[k] = campaign.Result{Claim: cl, At: at,
				Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}}
		}
		var claimErr error
		marks := 0
		if starts > 0 {
			marks = batch
		}
		cs, claimErr, err = l.RecordAndClaimN(ctx, runner, rs, id, at, batch, marks)
		done.Add(int64(len(rs)))
		if claimErr != nil {
			return nil // the last claim finds none left; a count short says otherwise
		}
	}
	if errors.Is(err, campaign.ErrDone) {
		return nil // the others took the last rows before this host's first claim
	}
	return err
}

// CPUTime is the CPU time this process has used, user and system.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
