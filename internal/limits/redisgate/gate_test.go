package redisgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/limitstest"
	"github.com/wasend/wasend/internal/ratelimit"
)

// redisHarness is a fresh portfolio on a shared server, its clock pinned
// through the scripts' test-only time argument: the step tables ask for
// exact token counts at named instants, which the Redis TIME of a loaded
// machine cannot give. TestRedisTIME checks the unpinned path.
type redisHarness struct {
	g   *Gate
	c   *redis.Client
	clk *clock.Sim
}

var portfolios atomic.Int64

func newRedisHarness(s *redisServer) limitstest.NewHarness {
	return func(t *testing.T) limitstest.Harness {
		c := s.client(t)
		g, err := New(c, fmt.Sprintf("conf-%d", portfolios.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		g.homes = g.portfolio + ":"
		h := &redisHarness{g: g, c: c, clk: clock.NewSim(limitstest.T0)}
		g.pinned = h.clk.Now
		return h
	}
}

func (h *redisHarness) Gate() limits.Gate  { return h.g }
func (h *redisHarness) SetNow(t time.Time) { h.clk.Set(t) }

// LoseState deletes the portfolio's keys, as a restart without persistence
// does (TestRedisKilledAndRestarted does it for real).
func (h *redisHarness) LoseState() {
	ctx := context.Background()
	keys, err := h.c.Keys(ctx, h.g.prefix+"*").Result()
	if err != nil {
		panic(err)
	}
	if len(keys) > 0 {
		if err := h.c.Del(ctx, keys...).Err(); err != nil {
			panic(err)
		}
	}
}

func TestRedisConformance(t *testing.T) {
	s := startRedis(t)
	limitstest.Run(t, newRedisHarness(s))
}

// Every key of a portfolio hashes to one Redis Cluster slot, so its
// scripts may touch them all.
func TestKeysShareOneSlot(t *testing.T) {
	g, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), "acme")
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{g.genKey(), g.claimKey("c{1}"), g.globalKey(), g.bucketKey("main:01"), g.dayKey("x"), g.usedKey("x", "2026-03-02#1"),
		g.reachKey(), g.rcptKey("+15550001")}
	for _, k := range keys {
		if tag := hashTag(k); tag != "p:acme" {
			t.Errorf("key %q hashes on %q, want p:acme", k, tag)
		}
	}
	for _, bad := range []string{"", "a}b", "{a", "tab\there"} {
		if _, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), bad); err == nil {
			t.Errorf("portfolio %q accepted", bad)
		}
	}
}

// hashTag is Redis Cluster's rule: the text between the first { and the
// next }, when not empty.
func hashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return key
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return key
	}
	return key[i+1 : i+1+j]
}

// Without a pinned clock the scripts read Redis TIME: the admission's
// instant lies between two TIME readings taken around it, and a refusal's
// wait is counted on that clock.
func TestRedisTIME(t *testing.T) {
	s := startRedis(t)
	c := s.client(t)
	g, err := New(c, "time")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	today := time.Now().Format(time.DateOnly)
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); err != nil {
		t.Fatal(err)
	}
	accts := []limits.Account{{Name: "a", Limit: ratelimit.Limit{Rate: 10, Burst: 2}, DailyCap: 100}}
	before, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var last limits.Admission
	for i := range 3 {
		if last, err = g.Admit(ctx, limits.Request{ClaimID: fmt.Sprint(i), Accounts: accts, Today: today}); err != nil {
			t.Fatal(err)
		}
		if i < 2 && !last.OK {
			t.Fatalf("admission %d refused: %+v", i, last)
		}
	}
	after, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if last.At.Before(before) || last.At.After(after) {
		t.Errorf("admitted at %v, not between Redis TIME %v and %v", last.At, before, after)
	}
	// Two tokens taken in a burst; the third waits at most one interval
	// (100 ms) from Redis's instant, less what accrued meanwhile.
	if last.OK || last.Reason != ratelimit.ReasonTokens {
		t.Fatalf("third admission = %+v, want a wait for tokens", last)
	}
	if wait := last.Until.Sub(last.At); wait <= 0 || wait > 100*time.Millisecond {
		t.Errorf("wait %v, want within (0, 100ms]", wait)
	}

	// A recipient's pair gap and the window are on the same clock.
	accts = []limits.Account{{Name: "r", Limit: ratelimit.Limit{Rate: 10, Burst: 10}, DailyCap: 100}}
	first, err := g.Admit(ctx, limits.Request{ClaimID: "p1", Accounts: accts, Today: today, Recipient: "+15550001", PairGap: time.Hour, Reach: ratelimit.Reach{Limit: 1}})
	if err != nil || !first.OK {
		t.Fatalf("first admission to a recipient: %+v, %v", first, err)
	}
	again, err := g.Admit(ctx, limits.Request{ClaimID: "p2", Accounts: accts, Today: today, Recipient: "+15550001", PairGap: time.Hour, Reach: ratelimit.Reach{Limit: 1}})
	if err != nil || again.OK || again.Reason != limits.ReasonPair || !again.Until.Equal(first.At.Add(time.Hour)) {
		t.Fatalf("again within the gap: %+v, %v; want pair until %v", again, err, first.At.Add(time.Hour))
	}
	other, err := g.Admit(ctx, limits.Request{ClaimID: "p3", Accounts: accts, Today: today, Recipient: "+15550002", Reach: ratelimit.Reach{Limit: 1}})
	if err != nil || other.OK || other.Reason != limits.ReasonReach || !other.Until.Equal(first.At.Add(ratelimit.ReachWindow)) {
		t.Fatalf("a second recipient under a reach of one: %+v, %v; want reach until %v", other, err, first.At.Add(ratelimit.ReachWindow))
	}
	st, err := g.State(ctx, accts, nil)
	if err != nil || st.Reach.Used != 1 || !st.Reach.Oldest.Equal(first.At) || st.At.Before(first.At) {
		t.Fatalf("state: %+v, %v; want one recipient in the window since %v", st, err, first.At)
	}
}

// A Redis killed mid-run: admissions fail closed while it is down; after a
// restart without persistence the lost generation stops admissions until a
// forced reset, and the scripts, gone with the restart, load again.
func TestRedisKilledAndRestarted(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	g, err := Open(ctx, s.url(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	today := "2026-03-02"
	accts := []limits.Account{{Name: "a", Limit: ratelimit.Limit{Rate: 0.001, Burst: 100}, DailyCap: 3}}
	admit := func(id string) (limits.Admission, error) {
		return g.Admit(ctx, limits.Request{ClaimID: id, Accounts: accts, Today: today})
	}
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if a, err := admit(id); err != nil || !a.OK {
			t.Fatalf("admit %s = %+v, %v", id, a, err)
		}
	}
	if a, err := admit("c4"); err != nil || a.Reason != ratelimit.ReasonCapped {
		t.Fatalf("admit at the cap = %+v, %v; want capped", a, err)
	}

	s.kill()
	for _, id := range []string{"c4", "c5"} {
		start := time.Now()
		a, err := admit(id)
		if err == nil || a.OK {
			t.Fatalf("admit %s with Redis down = %+v, %v; want an error and no admission", id, a, err)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("admit %s: error %v, want ErrUnavailable", id, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("admit %s took %v to fail", id, d)
		}
	}
	if _, err := g.Refund(ctx, limits.Claim{ID: "c1", Account: "a", Day: today + "#1"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("refund with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("reset with Redis down: %v, want ErrUnavailable", err)
	}

	s.restart()
	c := s.client(t)
	if ok, err := c.ScriptExists(ctx, admitScript.Hash()).Result(); err != nil || ok[0] {
		t.Fatalf("admit script after the restart: exists %v, %v; want gone", ok, err)
	}
	// The day's three admissions are gone with the data: nothing is
	// admitted from a fresh count.
	for _, id := range []string{"c4", "c5"} {
		if a, err := admit(id); !errors.Is(err, limits.ErrStateLost) || a.OK {
			t.Fatalf("admit %s after the restart = %+v, %v; want ErrStateLost", id, a, err)
		}
	}
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today}); !errors.Is(err, limits.ErrStateLost) {
		t.Fatalf("plain reset after the restart: %v, want ErrStateLost", err)
	}
	if ok, _ := c.ScriptExists(ctx, admitScript.Hash()).Result(); !ok[0] {
		t.Errorf("admit script not loaded again after NOSCRIPT")
	}
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); err != nil {
		t.Fatalf("forced reset after the restart: %v", err)
	}
	if a, err := admit("c4"); err != nil || !a.OK || a.Used != 1 {
		t.Fatalf("admit after the forced reset = %+v, %v", a, err)
	}
}

// SCRIPT FLUSH (or a failover to a replica without the scripts) answers
// EVALSHA with NOSCRIPT: the gate sends the script whole and goes on.
func TestScriptsReloadAfterNOSCRIPT(t *testing.T) {
	s := startRedis(t)
	c := s.client(t)
	ctx := context.Background()
	g, err := New(c, "flush")
	if err != nil {
		t.Fatal(err)
	}
	today := "2026-03-02"
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); err != nil {
		t.Fatal(err)
	}
	accts := []limits.Account{{Name: "a", Limit: ratelimit.Limit{Rate: 1, Burst: 10}, DailyCap: 10}}
	for i, flush := range []bool{false, true, true} {
		if flush {
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		a, err := g.Admit(ctx, limits.Request{ClaimID: fmt.Sprint(i), Accounts: accts, Today: today})
		if err != nil || !a.OK || a.Used != i+1 {
			t.Fatalf("admit %d after flush=%v: %+v, %v", i, flush, a, err)
		}
		res, err := g.Refund(ctx, a.Claim)
		if err != nil || res != limits.Refunded {
			t.Fatalf("refund %d: %v, %v", i, res, err)
		}
		a, err = g.Admit(ctx, limits.Request{ClaimID: fmt.Sprint(i) + "b", Accounts: accts, Today: today})
		if err != nil || !a.OK || a.Used != i+1 {
			t.Fatalf("admit %db: %+v, %v", i, a, err)
		}
	}
}

// The URL's password never shows in an error.
func TestOpenKeepsThePasswordOut(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	for _, u := range []string{
		"redis://user:s3cret@127.0.0.1:1/0",
		"http://user:s3cret@127.0.0.1:6379/0",
		"redis://user:s3cret@127.0.0.1:6379/notanumber",
		"redis://user:s3cret@" + s.addr() + "/0", // no password set on the server
		"redis://user:s3cret@[::1/0",
	} {
		g, err := Open(ctx, u, "p")
		if err == nil {
			g.Close()
			t.Errorf("Open(%q) succeeded", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
	if _, err := Open(ctx, s.url(), "a{b}"); err == nil {
		t.Error("a portfolio with braces was accepted")
	}
}

// Two hosts on one portfolio: a reset by one moves the other's admissions
// to the new quota day (its remembered day is stale, the script says so and
// it asks again), and a refund by either gives back the one count.
func TestTwoHostsShareOneDay(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	open := func() *Gate {
		g, err := Open(ctx, s.url(), "two")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	h1, h2 := open(), open()
	today := "2026-03-02"
	accts := []limits.Account{{Name: "a", Limit: ratelimit.Limit{Rate: 0.001, Burst: 100}, DailyCap: 2}}
	admit := func(g *Gate, id string) limits.Admission {
		t.Helper()
		a, err := g.Admit(ctx, limits.Request{ClaimID: id, Accounts: accts, Today: today})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if _, err := h1.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true}); err != nil {
		t.Fatal(err)
	}
	if a := admit(h1, "1"); !a.OK || a.Used != 1 {
		t.Fatalf("host 1: %+v", a)
	}
	if a := admit(h2, "2"); !a.OK || a.Used != 2 {
		t.Fatalf("host 2: %+v", a)
	}
	if a := admit(h1, "3"); a.OK || a.Reason != ratelimit.ReasonCapped {
		t.Fatalf("host 1 at the cap: %+v", a)
	}
	rs, err := h2.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: today, Force: true})
	if err != nil || rs[0].Day != today+"#2" || rs[0].Before != 2 {
		t.Fatalf("host 2 reset: %+v, %v", rs, err)
	}
	a := admit(h1, "3")
	if !a.OK || a.Used != 1 || a.Claim.Day != today+"#2" {
		t.Fatalf("host 1 after host 2's reset: %+v", a)
	}
	if res, err := h2.Refund(ctx, a.Claim); err != nil || res != limits.Refunded {
		t.Fatalf("host 2 refunds host 1's claim: %v, %v", res, err)
	}
	if res, err := h1.Refund(ctx, a.Claim); err != nil || res != limits.AlreadyRefunded {
		t.Fatalf("host 1 refunds it again: %v, %v", res, err)
	}
	if _, err := h1.Refund(ctx, limits.Claim{ID: "3", Account: "a", Day: today + "#1"}); err == nil {
		t.Fatal("a refund naming the wrong quota day was accepted")
	}
	st, err := h2.State(ctx, accts, nil)
	if err != nil || st.Accounts[0].Used != 0 || st.Accounts[0].Day != today+"#2" || st.Generation == "" {
		t.Fatalf("state: %+v, %v", st, err)
	}
}

// The recipients' memory does not grow for ever: the window's sorted set
// is trimmed by every admission and expires a window after the last one;
// a recipient's hash lives as long as the longest rule asked for, and a
// request with shorter rules never shortens it.
func TestRecipientKeysExpire(t *testing.T) {
	s := startRedis(t)
	c := s.client(t)
	ctx := context.Background()
	g, err := New(c, "ttl")
	if err != nil {
		t.Fatal(err)
	}
	now := limitstest.T0
	g.pinned = func() time.Time { return now }
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: limitstest.Today, Force: true}); err != nil {
		t.Fatal(err)
	}
	accts := []limits.Account{{Name: "a", Limit: ratelimit.Limit{Rate: 1, Burst: 100}, DailyCap: 100}}
	admit := func(id, to string, sticky time.Duration) {
		t.Helper()
		a, err := g.Admit(ctx, limits.Request{ClaimID: id, Accounts: accts, Today: limitstest.Today, Recipient: to, Sticky: sticky})
		if err != nil || !a.OK {
			t.Fatalf("admit %s: %+v, %v", id, a, err)
		}
	}
	ttl := func(key string) time.Duration {
		t.Helper()
		d, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	within := func(what string, got, want time.Duration) {
		t.Helper()
		if got > want || got < want-time.Minute {
			t.Errorf("%s expires in %v, want %v", what, got, want)
		}
	}
	const month = 30 * 24 * time.Hour
	admit("c1", "r1", month)
	within("r1 (sticky 30 days)", ttl(g.rcptKey("r1")), month)
	within("the window", ttl(g.reachKey()), ratelimit.ReachWindow)
	admit("c2", "r1", 0)
	within("r1 after a request without stickiness", ttl(g.rcptKey("r1")), month)
	admit("c3", "r2", 0)
	within("r2 (no rule longer than the window)", ttl(g.rcptKey("r2")), ratelimit.ReachWindow)

	// A day later the next admission trims the recipients who left.
	now = now.Add(ratelimit.ReachWindow + time.Second)
	admit("c4", "r3", 0)
	members, err := c.ZRange(ctx, g.reachKey(), 0, -1).Result()
	if err != nil || len(members) != 1 || members[0] != "r3" {
		t.Fatalf("window after a day: %v, %v; want only r3", members, err)
	}
	// Nothing is written for an admission that names no recipient.
	admit("c5", "", 0)
	if n, err := c.Exists(ctx, g.rcptKey("")).Result(); err != nil || n != 0 {
		t.Errorf("a key for the empty recipient: %d, %v", n, err)
	}

	// A refund that puts a recipient back into a window that expired
	// meanwhile makes it again with its expiry.
	admit("c6", "r3", 0)
	if err := c.Del(ctx, g.reachKey()).Err(); err != nil {
		t.Fatal(err)
	}
	if res, err := g.Refund(ctx, limits.Claim{ID: "c6", Account: "a", Day: limitstest.Today + "#1"}); err != nil || res != limits.Refunded {
		t.Fatalf("refund c6: %v, %v", res, err)
	}
	within("the window made again by a refund", ttl(g.reachKey()), ratelimit.ReachWindow)
}
