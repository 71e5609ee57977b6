package rowscan

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// AccountQuery selects the accounts not removed, joined with their tier
// and portfolio, as Account reads them; marginParam is the driver's first
// placeholder (? or $1), bound to the default margin
// (driver.DefaultMargin). A WHERE or ORDER BY may
// follow.
func AccountQuery(marginParam string) string {
	return `SELECT a.id, a.name, a.phone_number_id, a.tier, a.token_env,
		a.rate, a.burst, a.daily_cap, a.disabled <> 0, a.created_at, a.tokens, a.tokens_at, a.quota_day, a.quota_epoch, a.used_today,
		a.cooldown_until, a.throttle_streak, a.last_throttle_at, a.rate_factor, a.rate_factor_at, a.restriction, a.last_error_code,
		t.rate, t.burst, t.daily_cap, coalesce(a.throughput_read, 0), coalesce(a.throughput_pinned, 0),
		coalesce(a.messaging_limit_read, 0), a.quality_rating, a.verified_name, a.name_status, coalesce(a.synced_at, 0),
		coalesce(a.portfolio_id, 0), coalesce(p.name, ''), coalesce(p.pinned_limit, 0), coalesce(p.margin, ` + marginParam + `), a.waba_id,
		a.check_error, a.check_code, a.checked_at, a.api
		FROM (SELECT * FROM accounts WHERE removed_at IS NULL) a JOIN tiers t ON t.name = a.tier
		LEFT JOIN portfolios p ON p.id = a.portfolio_id `
}

// Account is an account as stored: its status with the stored bucket
// (Tokens and At not yet refilled), its health, and its portfolio's
// settings.
type Account struct {
	campaign.AccountStatus
	Health      ratelimit.Health
	PortfolioID int64 // 0: a portfolio of its own
	PinnedLimit int
	Margin      float64
}

// ScanAccount reads one row of AccountQuery.
func ScanAccount(sc Scanner) (Account, error) {
	var (
		r                                Account
		a                                = &r.AccountStatus
		rate                             sql.NullFloat64
		burst, dcap, lastCode            sql.NullInt64
		created, tokensAt                int64
		cooldown, lastThrottle, factorAt int64
		tier                             campaign.Limits
		syncedAt, checkedAt              int64
		// database/sql puts an int64 into an int through its decimal
		// text: the ints are read as int64.
		used, streak, tierBurst, tierCap, limitRead, pinned, checkCode int64
	)
	if err := sc.Scan(&a.ID, &a.Name, &a.PhoneNumberID, &a.Tier, &a.TokenEnv,
		&rate, &burst, &dcap, &a.Disabled, &created, &a.Tokens, &tokensAt, &a.QuotaDay, &a.QuotaEpoch, &used,
		&cooldown, &streak, &lastThrottle, &r.Health.Factor, &factorAt, &a.Restriction, &lastCode,
		&tier.Rate, &tierBurst, &tierCap, &a.ThroughputRead, &a.ThroughputPinned,
		&limitRead, &a.Synced.QualityRating, &a.Synced.VerifiedName, &a.Synced.NameStatus, &syncedAt,
		&r.PortfolioID, &a.Portfolio, &pinned, &r.Margin, &a.WABA,
		&a.Check.Error, &checkCode, &checkedAt, &a.API); err != nil {
		return r, err
	}
	a.UsedToday, r.Health.Streak, tier.Burst, tier.DailyCap = int(used), int(streak), int(tierBurst), int(tierCap)
	a.Synced.MessagingLimit, r.PinnedLimit, a.Check.Code = int(limitRead), int(pinned), int(checkCode)
	if rate.Valid {
		a.Overrides.Rate = &rate.Float64
	}
	if burst.Valid {
		v := int(burst.Int64)
		a.Overrides.Burst = &v
	}
	if dcap.Valid {
		v := int(dcap.Int64)
		a.Overrides.DailyCap = &v
	}
	a.CreatedAt = FromNanos(created)
	a.At = FromNanos(tokensAt)
	a.Synced.At, a.Synced.Throughput = FromNanos(syncedAt), a.ThroughputRead
	a.Throughput = campaign.EffectiveThroughput(a.ThroughputPinned, a.ThroughputRead)
	a.Limits = a.SendLimits(tier, a.ThroughputRead)
	r.Health.CooldownUntil = FromNanos(cooldown)
	r.Health.LastThrottle = FromNanos(lastThrottle)
	r.Health.FactorSince = FromNanos(factorAt)
	a.CooldownUntil = r.Health.CooldownUntil
	a.RateFactor = r.Health.Factor
	a.LastErrorCode = int(lastCode.Int64)
	a.Check.At = FromNanos(checkedAt)
	return r, nil
}

// Accounts reads every row of AccountQuery.
func Accounts(rows Rows) ([]Account, error) {
	var out []Account
	for rows.Next() {
		r, err := ScanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("read account: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// StatusAt is the account as shown at t: its bucket refilled to t at its
// limits scaled by its health, its rate factor settled.
func (r Account) StatusAt(t time.Time) campaign.AccountStatus {
	st := r.AccountStatus
	l := r.Health.Scale(ratelimit.Limit{Rate: st.Limits.Rate, Burst: st.Limits.Burst}, t)
	st.Tokens = ratelimit.Bucket{Tokens: st.Tokens, At: st.At}.TokensAt(l, t)
	st.At = t
	st.RateFactor = r.Health.FactorAt(t)
	return st
}

// StatusesAt is every account's StatusAt(t).
func StatusesAt(accts []Account, t time.Time) []campaign.AccountStatus {
	out := make([]campaign.AccountStatus, len(accts))
	for i, a := range accts {
		out[i] = a.StatusAt(t)
	}
	return out
}
