package redisgate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// BenchmarkAdmit measures admissions per second through a real Redis on
// loopback, for 1, 4 and 16 senders at once: three accounts and the global
// bucket, limits too high to refuse, so every call is a whole admission
// (settle, pick, spend, count, remember the claim). bench/redis.sh runs it
// beside redis-benchmark's EVALSHA of the same script.
func BenchmarkAdmit(b *testing.B) {
	s := startRedis(b)
	accts := []limits.Account{
		{Name: "a", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
		{Name: "b", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
		{Name: "c", Limit: ratelimit.Limit{Rate: 1e9, Burst: 1e9}, DailyCap: 1e12},
	}
	global := &ratelimit.Limit{Rate: 1e9, Burst: 1e9}
	for _, senders := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("senders=%d", senders), func(b *testing.B) {
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: s.addr(), PoolSize: senders})
			defer c.Close()
			g, err := New(c, fmt.Sprintf("bench-%d-%d", senders, b.N))
			if err != nil {
				b.Fatal(err)
			}
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
						a, err := g.Admit(ctx, limits.Request{ClaimID: fmt.Sprint(i), Accounts: accts, Global: global, Today: "2026-03-02"})
						if err != nil || !a.OK {
							b.Errorf("admit %d: %+v, %v", i, a, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
		})
	}
}
