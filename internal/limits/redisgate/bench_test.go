package redisgate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// BenchmarkAdmit measures admissions per second through a real Redis on
// loopback, for 1, 4 and 16 senders at once: three accounts and the global
// bucket, limits too high to refuse, so every call is a whole admission
// (settle, pick, spend, count, remember the claim). With recipients, each
// admission also names a new recipient under a reach, a pair gap and
// stickiness (check the memory, count the window, remember the recipient).
// bench/redis.sh runs it beside redis-benchmark's EVALSHA of the same
// script.
func BenchmarkAdmit(b *testing.B) {
	s := startRedis(b)
	accts := []limits.Account{
		{Name: "a", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
		{Name: "b", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
		{Name: "c", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
	}
	global := &ratelimit.Limit{Rate: 1e9, Burst: 1e9}
	for _, recipients := range []bool{false, true} {
		for _, senders := range []int{1, 4, 16} {
			name := fmt.Sprintf("senders=%d", senders)
			if recipients {
				name = "recipients/" + name
			}
			b.Run(name, func(b *testing.B) { benchAdmit(b, s, accts, global, senders, recipients) })
		}
	}
}

func benchAdmit(b *testing.B, s *redisServer, accts []limits.Account, global *ratelimit.Limit, senders int, recipients bool) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.addr(), PoolSize: senders})
	defer c.Close()
	g, err := New(c, fmt.Sprintf("bench-%v-%d-%d", recipients, senders, b.N))
	if err != nil {
		b.Fatal(err)
	}
	g.homes = g.portfolio + ":"
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a", "b", "c"}, Today: "2026-03-02", Force: true}); err != nil {
		b.Fatal(err)
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				r := limits.Request{ClaimID: fmt.Sprint(i), Accounts: accts, Global: global, Today: "2026-03-02"}
				if recipients {
					r.Recipient, r.Reach = fmt.Sprintf("+1555%07d", i), ratelimit.Reach{Limit: 1 << 30, Margin: 0.05}
					r.PairGap, r.Sticky = time.Minute, 30*24*time.Hour
				}
				a, err := g.Admit(ctx, r)
				if err != nil || !a.OK {
					b.Errorf("admit %d: %+v, %v", i, a, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
}
