package store_test

import (
	"context"

	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/store"
)

// The claim tests reset and read the shared quota day as the commands do,
// through hostshare (see store.SharedQuotaReset).
func init() {
	store.SharedQuotaReset = func(ctx context.Context, st *store.Store, pool *redisgate.Pool, force bool) error {
		_, err := hostshare.NewLimits(pool).ResetQuota(ctx, st, nil, force)
		return err
	}
	store.SharedDayCounts = func(ctx context.Context, st *store.Store, pool *redisgate.Pool) (map[string]int, error) {
		states, err := hostshare.NewLimits(pool).State(ctx, st)
		if err != nil {
			return nil, err
		}
		out := map[string]int{}
		for _, p := range states {
			for i, a := range p.Accounts {
				out[a.Name] = p.State.Accounts[i].Used
			}
		}
		return out, nil
	}
}
