package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// BenchmarkReceiverAt2000PerSecond posts signed status notifications at
// 2,000 a second (open loop: each request starts on schedule whether or
// not earlier ones were answered) over real HTTP to a receiver storing
// them in a real SQLite file, while the applier applies them to sent rows
// of a campaign in the same database. It reports the answer times' p50
// and p99 (issue 11's target: p99 ≤ 50 ms) and how far the applier
// lagged behind when the last answer came.
//
//	go test -run '^$' -bench ReceiverAt2000 -benchtime 20000x ./internal/webhook
func BenchmarkReceiverAt2000PerSecond(b *testing.B) {
	const rate = 2000
	n := max(b.N, 1000)
	b.StopTimer()
	fx := newFixture(b, n, Policy{})
	results := make([]campaign.Result, n)
	for i, c := range fx.claims {
		results[i] = campaign.Result{Claim: c, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: wamid(i), Class: "ok"}, At: t0}
	}
	if err := fx.st.RecordAll(context.Background(), "r1", results); err != nil {
		b.Fatal(err)
	}
	m := NewMetrics()
	ap := NewApplier(fx.st, Policy{}, m, nil)
	r := NewReceiver(ReceiverConfig{Inbox: fx.st, AppSecret: secret, Metrics: m, Stored: ap.Wake})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.Run(ctx) }()
	go func() { defer wg.Done(); ap.Run(ctx) }()
	srv := httptest.NewServer(r)
	defer func() { srv.Close(); cancel(); wg.Wait() }()

	bodies := make([][]byte, n)
	sigs := make([]string, n)
	for i := range n {
		bodies[i] = fx.body(status{row: i, status: "delivered", at: time.Second})
		sigs[i] = Sign(secret, bodies[i])
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}
	lat := make([]time.Duration, n)
	var (
		failed  int
		mu      sync.Mutex
		senders sync.WaitGroup
	)
	b.StartTimer()
	start := time.Now()
	for i := range n {
		// Open loop: request i starts at start + i/rate.
		if d := time.Until(start.Add(time.Duration(i) * time.Second / rate)); d > 0 {
			time.Sleep(d)
		}
		senders.Add(1)
		go func(i int) {
			defer senders.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(bodies[i]))
			req.Header.Set(SignatureHeader, sigs[i])
			t := time.Now()
			resp, err := client.Do(req)
			lat[i] = time.Since(t)
			if err != nil || resp.StatusCode != http.StatusOK {
				mu.Lock()
				failed++
				mu.Unlock()
			}
			if resp != nil {
				resp.Body.Close()
			}
		}(i)
	}
	senders.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	backlog, _ := fx.backlog(b)
	if failed > 0 {
		b.Fatalf("%d of %d posts not answered 200", failed, n)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[n/2]), "p50-ms")
	b.ReportMetric(ms(lat[n*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[n-1]), "max-ms")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "posts/s")
	b.ReportMetric(float64(backlog), "backlog-at-end")

	// Everything posted gets applied.
	if _, err := ap.Drain(context.Background()); err != nil {
		b.Fatal(err)
	}
	fig, err := readmodel.New(fx.st).CampaignDelivery(context.Background(), fx.c.ID)
	if err != nil || fig.Delivered != n {
		b.Fatalf("delivered %d of %d (%v)", fig.Delivered, n, err)
	}
}

// BenchmarkDrainStatuses applies Meta's three statuses of sent rows (sent,
// delivered, read: one body each, as Meta posts them) stored in the inbox
// beforehand: the applier's cost per body, which bounds the posts a
// second a receiver keeps up with. ns/op is per body.
//
//	go test -run '^$' -bench DrainStatuses -benchtime 30000x ./internal/webhook
func BenchmarkDrainStatuses(b *testing.B) {
	rows := b.N/3 + 1
	fx := newFixture(b, rows, Policy{})
	results := make([]campaign.Result, rows)
	for i, c := range fx.claims {
		results[i] = campaign.Result{Claim: c, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: wamid(i), Class: "ok"}, At: t0}
	}
	if err := fx.st.RecordAll(b.Context(), "r1", results); err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, 0, 3*rows)
	for i := range rows {
		for k, st := range []string{"sent", "delivered", "read"} {
			bodies = append(bodies, fx.body(status{row: i, status: st, at: time.Duration(k+1) * time.Second}))
		}
	}
	bodies = bodies[:b.N]
	if err := fx.st.AddToInbox(b.Context(), bodies); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cpuTime()
	rep, err := fx.ap.Drain(b.Context())
	cpu = cpuTime() - cpu
	b.StopTimer()
	if err != nil || rep.Bodies != b.N || rep.Statuses != b.N || rep.Unmatched+rep.Skipped != 0 {
		b.Fatalf("drained %+v (%v), want %d bodies applied", rep, err, b.N)
	}
	// On a shared machine the CPU time is the steadier figure.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/body")
}

// cpuTime is the user and system CPU the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
