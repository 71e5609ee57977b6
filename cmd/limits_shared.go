package cmd

import (
	"fmt"

	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/store"
)

// shareLimits makes st's claims ask the limits shared through Redis when
// --limits (or WASEND_LIMITS) names one. Nothing is connected yet: a Redis
// that is down makes sending wait, not the command fail.
func (f *Factory) shareLimits(st *store.Store) error {
	url := f.LimitsURL()
	if url == "" {
		return nil
	}
	pool, err := redisgate.Dial(url)
	if err != nil {
		return usageError{err}
	}
	st.ShareLimits(pool, redisgate.Unavailable)
	return nil
}

// limitsPool dials the shared limits for a command that reads or changes
// them itself (quota reset, limits status); nil without --limits.
func (f *Factory) limitsPool() (*redisgate.Pool, error) {
	url := f.LimitsURL()
	if url == "" {
		return nil, nil
	}
	pool, err := redisgate.Dial(url)
	if err != nil {
		return nil, usageError{err}
	}
	return pool, nil
}

// limitsWaitText says why a campaign's host claims nothing while it waits
// for the shared limits, and what ends the wait.
func limitsWaitText(lost bool, since, why string) string {
	if lost {
		return fmt.Sprintf("waiting for shared limits since %s: Redis holds no state (restarted without persistence?); nothing is sent until `wasend quota reset --force --limits URL` starts a quota day", since)
	}
	return fmt.Sprintf("waiting for shared limits since %s: Redis does not answer (%s); nothing is claimed until it does, then sending resumes by itself", since, why)
}
