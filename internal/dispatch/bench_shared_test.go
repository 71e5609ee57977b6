package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// BenchmarkSendUnlimitedShared is BenchmarkSendUnlimited with the limits
// shared through a real Redis on loopback (--limits): every message's
// admission is one script call inside the claim's transaction.
func BenchmarkSendUnlimitedShared(b *testing.B) {
	ctx := context.Background()
	rs := redistest.Start(b)
	benchSendUnlimited(b, func(st *store.Store, names []string) {
		rs.Client(b).FlushAll(ctx)
		pool, err := redisgate.Dial(rs.URL())
		if err != nil {
			b.Fatal(err)
		}
		if err := st.ShareLimits(ctx, pool, redisgate.Unavailable); err != nil {
			b.Fatal(err)
		}
		g, _ := pool.Gate(driver.DefaultPortfolio)
		if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: names, Today: time.Now().UTC().Format(time.DateOnly), Force: true}); err != nil {
			b.Fatal(err)
		}
	})
}
