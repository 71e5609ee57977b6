package store

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
)

// sender is one campaign's process in a simulation: it beats, claims one
// message at a time and records it sent at once.
type sender struct {
	name   string
	id     int64
	runner string
	from   time.Duration // when its process starts
	tokens []time.Duration
}

// play runs the senders on a fake clock from 0 to end in steps, each
// claiming as long as it gets messages; the order they ask in turns
// round each step, so no one wins by asking first.
func play(t *testing.T, st *Store, clk *clock.Sim, end, step time.Duration, senders ...*sender) {
	t.Helper()
	for k, at0 := 0, time.Duration(0); at0 <= end; k, at0 = k+1, at0+step {
		now := at(at0)
		clk.Set(now)
		for _, s := range senders {
			if at0 >= s.from {
				registerRunner(t, st, s.runner, s.id, now)
			}
		}
		for progress := true; progress; {
			progress = false
			for j := range senders {
				s := senders[(j+k)%len(senders)]
				if at0 < s.from {
					continue
				}
				c, err := st.Claim(t.Context(), s.id, s.runner, now)
				var we *campaign.WaitError
				switch {
				case err == nil:
					if err := st.Record(t.Context(), c, s.runner, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("w", c.Message.ID)}, now); err != nil {
						t.Fatal(err)
					}
					s.tokens = append(s.tokens, at0)
					progress = true
				case errors.As(err, &we), errors.Is(err, campaign.ErrDone):
				default:
					t.Fatalf("%s at %v: %v", s.name, at0, err)
				}
			}
		}
	}
}

func setShare(t *testing.T, st *Store, id int64, sh campaign.Share) {
	t.Helper()
	if err := st.SetShare(t.Context(), id, campaign.ShareChange{Priority: &sh.Priority, Weight: &sh.Weight, Borrow: &sh.Borrow}); err != nil {
		t.Fatal(err)
	}
}

// A low campaign sends alone; a high one starts at 10 s and takes every
// token until its 20 rows are sent; then the low one goes on.
func TestHighPriorityTakesEveryToken(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(1, 1, 100000))
	low := mustCampaign(t, st, "low", 100)
	high := mustCampaign(t, st, "high", 20)
	setShare(t, st, low.ID, campaign.Share{Priority: campaign.Low, Weight: 1})
	setShare(t, st, high.ID, campaign.Share{Priority: campaign.High, Weight: 1})
	l := &sender{name: "low", id: low.ID, runner: "rl"}
	h := &sender{name: "high", id: high.ID, runner: "rh", from: 10 * time.Second}
	play(t, st, clk, 60*time.Second, time.Second, l, h)

	if len(h.tokens) != 20 || h.tokens[0] != 10*time.Second || h.tokens[19] != 29*time.Second {
		t.Fatalf("high sent %d, from %v to %v; want 20, one a second from 10 s", len(h.tokens), h.tokens[0], h.tokens[len(h.tokens)-1])
	}
	for _, at := range l.tokens {
		if at >= 10*time.Second && at <= 29*time.Second {
			t.Errorf("low took a token at %v, while high had rows to send", at)
		}
	}
	if len(l.tokens) != 61-20 {
		t.Errorf("low sent %d, want every other token: %d", len(l.tokens), 61-20)
	}
	checkCounts(t, st, "the end", low.ID, high.ID)
}

// Two normal campaigns with weights 2 and 1 share one account's tokens
// 2:1, whichever process asks first.
func TestWeightsShareTokens(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(10, 1, 100000))
	a := mustCampaign(t, st, "a", 1500)
	b := mustCampaign(t, st, "b", 1500)
	setShare(t, st, a.ID, campaign.Share{Weight: 2})
	setShare(t, st, b.ID, campaign.Share{Weight: 1})
	sa := &sender{name: "a", id: a.ID, runner: "ra"}
	sb := &sender{name: "b", id: b.ID, runner: "rb"}
	play(t, st, clk, 150*time.Second, 100*time.Millisecond, sa, sb)

	ratio := float64(len(sa.tokens)) / float64(len(sb.tokens))
	t.Logf("a %d, b %d tokens: %.3f", len(sa.tokens), len(sb.tokens), ratio)
	if math.Abs(ratio-2)/2 > 0.02 {
		t.Errorf("a:b = %d:%d = %.3f, want 2 ± 2%%", len(sa.tokens), len(sb.tokens), ratio)
	}
	if n := len(sa.tokens) + len(sb.tokens); n < 1495 {
		t.Errorf("%d tokens taken in 150 s at 10/s: sharing lost some", n)
	}
}

// A campaign that joins late starts level with the one already sending:
// no burst of catching up.
func TestLateJoinerStartsLevel(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(1, 1, 100000))
	a := mustCampaign(t, st, "a", 500)
	b := mustCampaign(t, st, "b", 500)
	sa := &sender{name: "a", id: a.ID, runner: "ra"}
	sb := &sender{name: "b", id: b.ID, runner: "rb", from: 100 * time.Second}
	// a competes with b only once b starts; before that a alone.
	play(t, st, clk, 200*time.Second, time.Second, sa, sb)
	after := 0
	for _, at := range sa.tokens {
		if at >= 100*time.Second {
			after++
		}
	}
	if d := after - len(sb.tokens); d < -2 || d > 2 {
		t.Errorf("after b joined: a %d, b %d tokens; want an even split", after, len(sb.tokens))
	}
}

// A high campaign may go up to its borrow ahead of the bucket; the debt is
// paid before a campaign of another class sends.
func TestBorrowing(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(1, 1, 100000))
	normal := mustCampaign(t, st, "normal", 50)
	high := mustCampaign(t, st, "high", 5)
	setShare(t, st, high.ID, campaign.Share{Priority: campaign.High, Weight: 1, Borrow: 2 * time.Second})
	n := &sender{name: "normal", id: normal.ID, runner: "rn"}
	h := &sender{name: "high", id: high.ID, runner: "rh"}
	play(t, st, clk, 20*time.Second, time.Second, n, h)

	// Borrow: 2 s of 1/s, at most the burst of 1: one token ahead. At 0 s
	// the bucket's token and a borrowed one, then one a second.
	want := []time.Duration{0, 0, time.Second, 2 * time.Second, 3 * time.Second}
	if fmt.Sprint(h.tokens) != fmt.Sprint(want) {
		t.Fatalf("high took tokens at %v, want %v", h.tokens, want)
	}
	// At 3 s the bucket is at -1; normal waits for a whole token: 5 s.
	if len(n.tokens) == 0 || n.tokens[0] != 5*time.Second {
		t.Fatalf("normal's first token at %v, want 5 s (the debt repaid first)", n.tokens)
	}
	if a := accountByName(t, st, "a"); a.Tokens < -1e-9 {
		t.Errorf("the bucket ends at %.2f tokens", a.Tokens)
	}
}
