package redisgate

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// A number moved to another portfolio (or into a new one) takes its day's
// count along: its daily cap is never spent twice because of the move.
func TestMovedNumberKeepsItsCap(t *testing.T) {
	s := startRedis(t)
	ctx := context.Background()
	today, tomorrow := "2026-03-02", "2026-03-03"
	accts := []limits.Account{{Name: "n1", Limit: ratelimit.Limit{Rate: 0.001, Burst: 100}, DailyCap: 10}}
	open := func(p string) *Gate {
		g, err := Open(ctx, s.url(), p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	id := 0
	admit := func(g *Gate, day string) (limits.Admission, error) {
		id++
		return g.Admit(ctx, limits.Request{ClaimID: "c" + strconv.Itoa(id), Accounts: accts, Today: day})
	}
	// sendAll admits until the gate refuses, and returns how many it took.
	sendAll := func(t *testing.T, g *Gate, day string) int {
		t.Helper()
		for n := 0; ; n++ {
			a, err := admit(g, day)
			if err != nil {
				t.Fatal(err)
			}
			if !a.OK {
				if a.Reason != ratelimit.ReasonCapped {
					t.Fatalf("refused for %s, want capped", a.Reason)
				}
				return n
			}
			if n > 20 {
				t.Fatal("no cap")
			}
		}
	}
	reset := func(g *Gate, day string, force bool) (limits.Reset, error) {
		rs, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{accts[0].Name}, Today: day, Force: force})
		if err != nil {
			return limits.Reset{}, err
		}
		return rs[0], nil
	}
	start := func(t *testing.T, g *Gate) {
		t.Helper()
		if _, err := g.ResetQuota(ctx, limits.ResetRequest{Today: today, Force: true}); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name string
		run  func(t *testing.T, old, neu *Gate)
	}{
		{"moved mid-day: the new portfolio counts on from 9", func(t *testing.T, old, neu *Gate) {
			start(t, neu)
			if got := sendAll(t, neu, today); got != 1 {
				t.Errorf("new portfolio admitted %d after 9 sent under the old, want 1", got)
			}
			// A host that has not moved the number yet is refused there.
			if got := sendAll(t, old, today); got != 0 {
				t.Errorf("old portfolio admitted %d after the move, want 0", got)
			}
		}},
		{"a new portfolio's first reset keeps the count; the next day is fresh", func(t *testing.T, old, neu *Gate) {
			if _, err := neu.ResetQuota(ctx, limits.ResetRequest{Today: today, Force: true}); err != nil {
				t.Fatal(err)
			}
			r, err := reset(neu, today, false)
			if err != nil || r.Reset || r.Before != 9 {
				t.Fatalf("same-day reset in the new portfolio: %+v, %v", r, err)
			}
			if got := sendAll(t, neu, today); got != 1 {
				t.Errorf("admitted %d, want 1", got)
			}
			if r, err := reset(neu, tomorrow, false); err != nil || !r.Reset {
				t.Fatalf("next day's reset: %+v, %v", r, err)
			}
			if got := sendAll(t, neu, tomorrow); got != 10 {
				t.Errorf("next day admitted %d, want 10", got)
			}
		}},
		{"into a new portfolio that a forced reset starts: the count carries", func(t *testing.T, old, neu *Gate) {
			if _, err := admit(neu, today); !errors.Is(err, limits.ErrStateLost) {
				t.Fatalf("before the new portfolio is started: %v, want ErrStateLost", err)
			}
			if _, err := reset(neu, today, true); err != nil {
				t.Fatal(err)
			}
			st, err := neu.State(ctx, accts, nil)
			if err != nil || st.Accounts[0].Used != 9 {
				t.Fatalf("state after the forced start: %+v, %v; want 9 used", st, err)
			}
			if got := sendAll(t, neu, today); got != 1 {
				t.Errorf("admitted %d, want 1", got)
			}
		}},
		{"two hosts hand over at once: counted once", func(t *testing.T, old, neu *Gate) {
			start(t, neu)
			other := open(neu.portfolio)
			a, b := sendAll(t, neu, today), sendAll(t, other, today)
			if a+b != 1 {
				t.Errorf("two hosts admitted %d+%d after the move, want 1 in all", a, b)
			}
		}},
		{"moved from a portfolio whose state is lost: waits for a forced reset", func(t *testing.T, old, neu *Gate) {
			start(t, neu)
			if err := old.rdb.Del(ctx, old.genKey()).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := admit(neu, today); !errors.Is(err, limits.ErrStateLost) {
				t.Fatalf("admission after a move from a lost portfolio: %v, want ErrStateLost", err)
			}
			if _, err := reset(neu, today, false); !errors.Is(err, limits.ErrStateLost) {
				t.Fatalf("plain reset: %v, want ErrStateLost", err)
			}
			if _, err := reset(neu, today, true); err != nil {
				t.Fatalf("forced reset: %v", err)
			}
			if got := sendAll(t, neu, today); got != 10 {
				t.Errorf("after the forced reset admitted %d, want 10", got)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accts[0].Name = "n" + strconv.Itoa(i)
			old, neu := open("old"+strconv.Itoa(i)), open("new"+strconv.Itoa(i))
			start(t, old)
			for range 9 {
				if a, err := admit(old, today); err != nil || !a.OK {
					t.Fatalf("old portfolio: %+v, %v", a, err)
				}
			}
			tt.run(t, old, neu)
		})
	}
}
