// Package redisgate is the limits gate on Redis, for several hosts sending
// from one portfolio of numbers. Every decision is one Lua script (admit.lua,
// refund.lua, reset.lua; move.lua and take.lua when a number changes
// portfolio, see move.go): all-or-nothing, with Redis's own TIME as the clock
// so hosts with skewed clocks agree. Scripts are sent by SHA and sent whole
// again after NOSCRIPT (a restarted Redis). Every key of a portfolio carries
// the hash tag {p:NAME}, so a Redis Cluster keeps a portfolio on one node
// and its scripts may touch all of its keys. Each number's home key,
// wasend:{n:NUMBER}:home, names the portfolio that counts its cap (move.go).
//
// Keys of portfolio P (prefix wasend:{p:P}:):
//
//	gen                  the generation: written by a forced quota reset or the first rebuild; its absence
//	                     means the state was lost
//	rebuilt              hash gen → the generation a rebuild started after a loss, h:HOST → 1 for
//	                     each host that added its part of the lost day (rebuild.lua); a host not
//	                     in it is admitted nothing in that generation until it has
//	bucket:ACCOUNT       hash tokens, at (µs), rate, burst: the account's token bucket
//	global               the same for the global bucket
//	day:ACCOUNT          the account's current quota day, DAY#N
//	used:ACCOUNT:DAY#N   the count of that quota day (expires two days after the day ends)
//	moved:ACCOUNT        DAY#N<tab>COUNT: the day and count the number took along when it
//	                     moved to another portfolio (move.go); the count here is then full
//	claim:ID             A|R<tab>ACCOUNT<tab>DAY#N<tab>RECIPIENT[<tab>GUARD] of one admission
//	                     (A: admitted, R: refunded), for refunds and repeats (48 h)
//	reach                sorted set: recipient → their latest admission (µs), the moving
//	                     24 h window of the portfolio's reach; trimmed by every admission,
//	                     expires 24 h after the last
//	guard:RECIPIENT:GUARD  HOST<tab>CLAIM<tab>END µs: the host that holds the repeat guard of
//	                     message GUARD to RECIPIENT (limits.Request.Guard) and until when; the
//	                     key expires then, or is deleted by a refund of that claim
//	rcpt:RECIPIENT       hash at, acct, claim: the recipient's latest admission (pair gap,
//	                     sticky sender), and pat, pacct, pclaim: the one before, which a
//	                     refund of the latest goes back to; expires when the longest of
//	                     the window, the pair gap and the stickiness asked for has passed
package redisgate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

var (
	//go:embed admit.lua
	admitLua string
	//go:embed refund.lua
	refundLua string
	//go:embed reset.lua
	resetLua string
	//go:embed rebuild.lua
	rebuildLua string

	admitScript   = redis.NewScript(admitLua)
	refundScript  = redis.NewScript(refundLua)
	resetScript   = redis.NewScript(resetLua)
	rebuildScript = redis.NewScript(rebuildLua)
)

// go-redis logs dial failures to stderr by itself; wasend's terminal is
// its own, and every failure reaches the caller as an error anyway.
func init() { redis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// ErrUnavailable wraps every failure to reach Redis or to hear its answer.
// The gate fails closed: nothing is admitted, and the caller waits and asks
// again (with the same claim id, which a lost reply makes safe).
var ErrUnavailable = errors.New("shared limits (Redis) unavailable")

// Gate is the limits gate of one portfolio on one Redis (or Redis Cluster).
type Gate struct {
	rdb       redis.UniversalClient
	portfolio string
	prefix    string

	// pinned, when set, replaces Redis TIME in admissions and State: only
	// tests set it, so the same step tables run exactly against the
	// reference model and Redis.
	pinned func() time.Time

	mu    sync.Mutex
	days  map[string]string // the quota day each account was last seen on
	homed map[string]bool   // accounts this portfolio is the home of (adopt)
	// homes, empty but in tests, sets the numbers' home keys apart: step
	// tables that each open a fresh portfolio with the same account names
	// on one server would otherwise move the numbers between them.
	homes string
}

var _ limits.Gate = (*Gate)(nil)

// Default timeouts when the URL sets none: a sender waits on Redis for at
// most about a second before it treats the limits as unavailable.
const (
	defaultDialTimeout = 2 * time.Second
	defaultIOTimeout   = time.Second
)

// Open connects to the Redis at rawURL (redis://[user:pass@]host:port/db,
// rediss:// for TLS) for portfolio. The URL's password never appears in an
// error.
func Open(ctx context.Context, rawURL, portfolio string) (*Gate, error) {
	if err := limits.ValidName("portfolio", portfolio); err != nil {
		return nil, err
	}
	rdb, err := dial(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return New(rdb, portfolio)
}

// New returns the gate of portfolio on a connected client (a plain or a
// cluster client). Close closes the client.
func New(rdb redis.UniversalClient, portfolio string) (*Gate, error) {
	if err := limits.ValidName("portfolio", portfolio); err != nil {
		return nil, err
	}
	return &Gate{
		rdb:       rdb,
		portfolio: portfolio,
		prefix:    "wasend:{p:" + portfolio + "}:",
		days:      map[string]string{},
		homed:     map[string]bool{},
	}, nil
}

// Close closes the Redis client.
func (g *Gate) Close() error { return g.rdb.Close() }

func (g *Gate) genKey() string                  { return g.prefix + "gen" }
func (g *Gate) claimKey(id string) string       { return g.prefix + "claim:" + id }
func (g *Gate) globalKey() string               { return g.prefix + "global" }
func (g *Gate) bucketKey(account string) string { return g.prefix + "bucket:" + account }
func (g *Gate) dayKey(account string) string    { return g.prefix + "day:" + account }
func (g *Gate) reachKey() string                { return g.prefix + "reach" }
func (g *Gate) rcptKey(to string) string        { return g.prefix + "rcpt:" + to }
func (g *Gate) rebuiltKey() string              { return g.prefix + "rebuilt" }
func (g *Gate) guardKey(to, guard string) string {
	return g.prefix + "guard:" + to + ":" + guard
}
func (g *Gate) usedKey(account, day string) string {
	return g.prefix + "used:" + account + ":" + day
}

func (g *Gate) nowArg() string {
	if g.pinned == nil {
		return ""
	}
	return strconv.FormatInt(g.pinned().UnixMicro(), 10)
}

func (g *Gate) believed(account string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.days[account]
}

func (g *Gate) believe(account, day string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.days[account] = day
}

// Unreachable wraps err, from a call to Redis doing what, in
// ErrUnavailable: every package that talks to the shared Redis says so the
// same way, and callers test it with Unavailable.
func Unreachable(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
}

// maxStale bounds how often one admission follows a moved quota day: it
// moves only by a reset, so twice in a row is already rare.
const maxStale = 4

func (g *Gate) Admit(ctx context.Context, r limits.Request) (limits.Admission, error) {
	if err := r.Validate(); err != nil {
		return limits.Admission{}, err
	}
	allowed := -1
	if r.Reach.Limited() {
		allowed = r.Reach.Allowed()
	}
	for _, a := range r.Accounts {
		if err := g.adopt(ctx, a.Name, false); err != nil {
			return limits.Admission{}, fmt.Errorf("admit %s: %w", r.ClaimID, err)
		}
	}
	keep := max(ratelimit.ReachWindow, r.PairGap, r.Sticky)
	for range maxStale {
		keys := []string{g.genKey(), g.claimKey(r.ClaimID), g.globalKey(), g.reachKey(), g.rcptKey(r.Recipient),
			g.guardKey(r.Recipient, r.Guard), g.rebuiltKey()}
		args := []any{g.nowArg(), "0", "0", "0", r.Today, int64(limits.ClaimTTL / time.Second), len(r.Accounts),
			r.Recipient, allowed, ceilMicros(r.PairGap), ceilMicros(r.Sticky), ceilMillis(keep),
			ratelimit.ReachWindow.Microseconds(), r.ClaimID, r.Guard, r.Host, limits.GuardWindow.Milliseconds()}
		if r.Global != nil {
			args[1], args[2], args[3] = "1", fmtFloat(r.Global.Rate), r.Global.Burst
		}
		for _, a := range r.Accounts {
			day := g.believed(a.Name)
			keys = append(keys, g.bucketKey(a.Name), g.dayKey(a.Name), g.usedKey(a.Name, day))
			demoted := "0"
			if a.Demoted {
				demoted = "1"
			}
			args = append(args, a.Name, fmtFloat(a.Limit.Rate), a.Limit.Burst, a.DailyCap, demoted, day)
		}
		res, err := admitScript.Run(ctx, g.rdb, keys, args...).Slice()
		if err != nil {
			return limits.Admission{}, Unreachable("admit "+r.ClaimID, err)
		}
		a, stale, err := g.admission(r, res)
		if err != nil || !stale {
			return a, err
		}
	}
	return limits.Admission{}, fmt.Errorf("admit %s: the quota day moved %d times while asking", r.ClaimID, maxStale)
}

// admission reads admit.lua's answer.
func (g *Gate) admission(r limits.Request, res []any) (a limits.Admission, stale bool, err error) {
	bad := func() (limits.Admission, bool, error) {
		return limits.Admission{}, false, fmt.Errorf("admit %s: unexpected answer from the script: %v", r.ClaimID, res)
	}
	s := strs(res)
	if len(s) == 0 {
		return bad()
	}
	switch s[0] {
	case "LOST":
		return a, false, fmt.Errorf("admit %s: %w", r.ClaimID, limits.ErrStateLost)
	case "REBUILD":
		return a, false, fmt.Errorf("admit %s: %w", r.ClaimID, limits.ErrRebuild)
	case "DUP":
		if len(s) != 3 {
			return bad()
		}
		a = limits.Admission{OK: true, Replayed: true, Index: -1, Claim: limits.Claim{ID: r.ClaimID, Account: s[1], Day: s[2]}}
		for i, acct := range r.Accounts {
			if acct.Name == s[1] {
				a.Index = i
			}
		}
		return a, false, nil
	case "STALE":
		if len(s) != 1+len(r.Accounts) {
			return bad()
		}
		for i, acct := range r.Accounts {
			g.believe(acct.Name, s[1+i])
		}
		return a, true, nil
	case "NO":
		if len(s) != 4 && len(s) != 5 {
			return bad()
		}
		if len(s) == 5 {
			a.StickyAccount = s[4]
		}
		a.Reason = ratelimit.Reason(s[1])
		if s[2] != "" {
			if a.Until, err = micros(s[2]); err != nil {
				return bad()
			}
		}
		if a.At, err = micros(s[3]); err != nil {
			return bad()
		}
		return a, false, nil
	case "OK":
		if len(s) != 8 {
			return bad()
		}
		i, err1 := strconv.Atoi(s[1])
		used, err2 := strconv.Atoi(s[3])
		tokens, err3 := strconv.ParseFloat(s[4], 64)
		at, err4 := micros(s[5])
		if errors.Join(err1, err2, err3, err4) != nil || i < 1 || i > len(r.Accounts) {
			return bad()
		}
		name := r.Accounts[i-1].Name
		return limits.Admission{
			OK: true, Index: i - 1, Used: used, Tokens: tokens, At: at,
			Claim:         limits.Claim{ID: r.ClaimID, Account: name, Day: s[2]},
			StickyAccount: s[6], StickyBroken: s[7] == "1",
		}, false, nil
	}
	return bad()
}

func (g *Gate) Refund(ctx context.Context, c limits.Claim) (limits.RefundResult, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	// The claim's record names the recipient whose memory the refund may
	// take back: read it first, so the script is given every key it
	// touches (Redis Cluster). The record never changes but for its
	// refunded mark, which the script checks again.
	raw, err := g.rdb.Get(ctx, g.claimKey(c.ID)).Result()
	if errors.Is(err, redis.Nil) {
		return limits.UnknownClaim, nil
	}
	if err != nil {
		return 0, Unreachable("refund "+c.ID, err)
	}
	rec, ok := parseClaim(raw)
	if !ok {
		return 0, fmt.Errorf("refund %s: unreadable claim record %q", c.ID, raw)
	}
	if c.ByID() {
		c.Account, c.Day = rec.account, rec.day
	}
	if rec.account != c.Account || rec.day != c.Day {
		return 0, fmt.Errorf("refund %s: admitted for %s on %s, not %s on %s", c.ID, rec.account, rec.day, c.Account, c.Day)
	}
	res, err := refundScript.Run(ctx, g.rdb,
		[]string{g.claimKey(c.ID), g.usedKey(c.Account, c.Day), g.reachKey(), g.rcptKey(rec.recipient), g.guardKey(rec.recipient, rec.guard)},
		c.Account, c.Day, c.ID, rec.recipient, ratelimit.ReachWindow.Milliseconds(), rec.guard).Result()
	if err != nil {
		return 0, Unreachable("refund "+c.ID, err)
	}
	switch v := res.(type) {
	case int64:
		switch v {
		case 0:
			return limits.UnknownClaim, nil
		case 1:
			return limits.Refunded, nil
		case 2:
			return limits.AlreadyRefunded, nil
		}
	case []any:
		if s := strs(v); len(s) == 2 && s[0] == "MISMATCH" {
			if rec, ok := parseClaim(s[1]); ok {
				return 0, fmt.Errorf("refund %s: admitted for %s on %s, not %s on %s", c.ID, rec.account, rec.day, c.Account, c.Day)
			}
			return 0, fmt.Errorf("refund %s: unreadable claim record %q", c.ID, s[1])
		}
	}
	return 0, fmt.Errorf("refund %s: unexpected answer from the script: %v", c.ID, res)
}

// claimRecord is a claim key's value, as admit.lua writes it.
type claimRecord struct {
	refunded                bool
	account, day, recipient string
	guard                   string // the repeat guard it took, "" for none
}

func parseClaim(s string) (claimRecord, bool) {
	f := strings.Split(s, "\t")
	if (len(f) != 4 && len(f) != 5) || (f[0] != "A" && f[0] != "R") {
		return claimRecord{}, false
	}
	rec := claimRecord{refunded: f[0] == "R", account: f[1], day: f[2], recipient: f[3]}
	if len(f) == 5 {
		rec.guard = f[4]
	}
	return rec, true
}

func (g *Gate) ResetQuota(ctx context.Context, r limits.ResetRequest) ([]limits.Reset, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	for _, n := range r.Accounts {
		// A number that moved here carries its day's count; forced, the
		// reset starts a new quota day whatever it carried, so a lost
		// portfolio (its former or this one) does not stop it.
		if err := g.adopt(ctx, n, r.Force); err != nil && !(r.Force && errors.Is(err, limits.ErrStateLost)) {
			return nil, fmt.Errorf("quota reset: %w", err)
		}
	}
	keys := []string{g.genKey()}
	for _, n := range r.Accounts {
		keys = append(keys, g.dayKey(n))
	}
	force := "0"
	if r.Force {
		force = "1"
	}
	res, err := resetScript.Run(ctx, g.rdb, keys, r.Today, force, limits.NewGeneration()).Slice()
	if err != nil {
		return nil, Unreachable("quota reset", err)
	}
	s := strs(res)
	if len(s) == 1 && s[0] == "LOST" {
		return nil, fmt.Errorf("quota reset: %w", limits.ErrStateLost)
	}
	if len(s) != 2+2*len(r.Accounts) || s[0] != "OK" {
		return nil, fmt.Errorf("quota reset: unexpected answer from the script: %v", res)
	}
	// The day a reset left is frozen (admissions follow day:ACCOUNT), so
	// its count is read after the script; it is kept two days for refunds
	// that may still arrive, then expires.
	out := make([]limits.Reset, len(r.Accounts))
	counts := make([]*redis.StringCmd, len(r.Accounts))
	_, err = g.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range r.Accounts {
			old, cur := s[2+2*i], s[3+2*i]
			out[i] = limits.Reset{Account: n, Day: cur, LastDay: old, Reset: old != cur}
			if cal, _, err := limits.ParseDayID(old); err == nil {
				out[i].Behind = r.Today < cal
			}
			if old == "" {
				continue
			}
			counts[i] = p.Get(ctx, g.usedKey(n, old))
			if old != cur {
				p.Expire(ctx, g.usedKey(n, old), limits.ClaimTTL)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, Unreachable("quota reset: the days before", err)
	}
	if r.Force {
		// A number that moved into a portfolio this reset just started
		// (a new one) could not be handed over before: now it can.
		for _, n := range r.Accounts {
			if err := g.adopt(ctx, n, true); err != nil && !errors.Is(err, limits.ErrStateLost) {
				return nil, fmt.Errorf("quota reset: %w", err)
			}
		}
	}
	for i := range out {
		g.believe(out[i].Account, out[i].Day)
		if counts[i] != nil {
			out[i].Before, _ = counts[i].Int() // redis.Nil: nothing counted
		}
	}
	return out, nil
}

func (g *Gate) Rebuild(ctx context.Context, r limits.RebuildRequest) (limits.RebuildResult, error) {
	if err := r.Validate(); err != nil {
		return limits.RebuildResult{}, err
	}
	args := []any{g.nowArg(), r.Now.UnixMicro(), r.Host, r.Today, limits.NewGeneration(), g.prefix,
		len(r.Accounts), len(r.Window), len(r.Guards), ratelimit.ReachWindow.Microseconds(), limits.GuardWindow.Microseconds()}
	for _, a := range r.Accounts {
		args = append(args, a.Account, a.Day, a.Used)
	}
	for _, c := range r.Window {
		args = append(args, c.Recipient, c.At.UnixMicro(), c.Account)
	}
	for _, h := range r.Guards {
		args = append(args, h.Recipient, h.Guard, h.At.UnixMicro())
	}
	res, err := rebuildScript.Run(ctx, g.rdb, []string{g.genKey(), g.rebuiltKey(), g.reachKey()}, args...).Slice()
	if err != nil {
		return limits.RebuildResult{}, Unreachable("rebuild", err)
	}
	s := strs(res)
	switch {
	case len(s) == 1 && s[0] == "LIVE":
		return limits.RebuildResult{}, fmt.Errorf("rebuild: %w", limits.ErrNotLost)
	case len(s) == 1+len(r.Accounts) && s[0] == "ALREADY":
		out := limits.RebuildResult{Already: true, OnRebuiltDay: map[string]bool{}}
		for i, a := range r.Accounts {
			out.OnRebuiltDay[a.Account] = s[1+i] == "1"
		}
		return out, nil
	case len(s) != 2+2*len(r.Accounts) || s[0] != "OK":
		return limits.RebuildResult{}, fmt.Errorf("rebuild: unexpected answer from the script: %v", res)
	}
	out := limits.RebuildResult{Started: s[1] == "1", Added: map[string]int{}, Days: map[string]string{}}
	for i, a := range r.Accounts {
		out.Days[a.Account] = s[3+2*i]
		n, err := strconv.Atoi(s[2+2*i])
		if err != nil {
			return limits.RebuildResult{}, fmt.Errorf("rebuild: unexpected answer from the script: %v", res)
		}
		if n > 0 {
			out.Added[a.Account] += n
		}
	}
	// The days the script started are the ones admissions will find.
	g.mu.Lock()
	clear(g.days)
	g.mu.Unlock()
	return out, nil
}

func (g *Gate) State(ctx context.Context, accounts []limits.Account, global *ratelimit.Limit) (limits.State, error) {
	var (
		tm      *redis.TimeCmd
		gen     *redis.StringCmd
		globalB *redis.SliceCmd
		buckets = make([]*redis.SliceCmd, len(accounts))
		days    = make([]*redis.StringCmd, len(accounts))
	)
	_, err := g.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		tm = p.Time(ctx)
		gen = p.Get(ctx, g.genKey())
		globalB = p.HMGet(ctx, g.globalKey(), "tokens", "at", "rate", "burst")
		for i, a := range accounts {
			buckets[i] = p.HMGet(ctx, g.bucketKey(a.Name), "tokens", "at", "rate", "burst")
			days[i] = p.Get(ctx, g.dayKey(a.Name))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return limits.State{}, Unreachable("read shared limits", err)
	}
	st := limits.State{Generation: gen.Val(), At: tm.Val()}
	if g.pinned != nil {
		st.At = g.pinned()
	}
	used := make([]*redis.StringCmd, len(accounts))
	var inWindow *redis.IntCmd
	var oldest *redis.ZSliceCmd
	_, err = g.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		lo := "(" + strconv.FormatInt(st.At.Add(-ratelimit.ReachWindow).UnixMicro(), 10)
		hi := strconv.FormatInt(st.At.UnixMicro(), 10)
		inWindow = p.ZCount(ctx, g.reachKey(), lo, hi)
		oldest = p.ZRangeByScoreWithScores(ctx, g.reachKey(), &redis.ZRangeBy{Min: lo, Max: hi, Count: 1})
		for i, a := range accounts {
			if d := days[i].Val(); d != "" {
				used[i] = p.Get(ctx, g.usedKey(a.Name, d))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return limits.State{}, Unreachable("read shared limits", err)
	}
	for i, a := range accounts {
		as := limits.AccountState{Name: a.Name, Day: days[i].Val(), Tokens: tokensAt(buckets[i].Val(), a.Limit, st.At)}
		if used[i] != nil {
			as.Used, _ = used[i].Int()
		}
		st.Accounts = append(st.Accounts, as)
	}
	if global != nil {
		st.Global = &limits.BucketState{Tokens: tokensAt(globalB.Val(), *global, st.At)}
	}
	st.Reach.Used = int(inWindow.Val())
	if z := oldest.Val(); len(z) > 0 {
		st.Reach.Oldest = time.UnixMicro(int64(z[0].Score))
	}
	return st, nil
}

// tokensAt is a stored bucket's tokens at t under l, as admit.lua settles it.
func tokensAt(h []any, l ratelimit.Limit, t time.Time) float64 {
	s := strs(h)
	if len(s) != 4 || s[0] == "" || s[1] == "" {
		return float64(l.Burst)
	}
	tokens, err1 := strconv.ParseFloat(s[0], 64)
	at, err2 := micros(s[1])
	rate, err3 := strconv.ParseFloat(s[2], 64)
	burst, err4 := strconv.Atoi(s[3])
	if errors.Join(err1, err2, err3, err4) != nil {
		return float64(l.Burst)
	}
	b := ratelimit.Bucket{Tokens: tokens, At: at}
	return b.Relimit(ratelimit.Limit{Rate: rate, Burst: burst}, l, t).Tokens
}

// strs turns a script's reply into strings; nil becomes "".
func strs(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		switch x := x.(type) {
		case string:
			out[i] = x
		case int64:
			out[i] = strconv.FormatInt(x, 10)
		case nil:
		default:
			out[i] = fmt.Sprint(x)
		}
	}
	return out
}

func micros(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(n), nil
}

// ceilMicros is d in whole microseconds, rounded up: a gap is never
// shorter on Redis's clock.
func ceilMicros(d time.Duration) int64 { return int64((d + time.Microsecond - 1) / time.Microsecond) }

func ceilMillis(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// fmtFloat writes a rate so that Lua reads back the same float64.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
