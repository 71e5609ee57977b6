package store

import (
	"context"

	"github.com/wasend/wasend/internal/limits/redisgate"
)

// SharedQuotaReset and SharedDayCounts are package hostshare's quota reset
// and state read (hostshare.Limits.ResetQuota and State), which the claim
// tests under --limits start and check the shared day with. hostshare
// imports this package, so these tests cannot import it: hostshare_test.go,
// an external test file compiled into the same test binary, sets them.
var (
	SharedQuotaReset func(ctx context.Context, st *Store, pool *redisgate.Pool, force bool) error
	// SharedDayCounts is every account's count of its shared quota day, by
	// this database's name of it.
	SharedDayCounts func(ctx context.Context, st *Store, pool *redisgate.Pool) (map[string]int, error)
)
