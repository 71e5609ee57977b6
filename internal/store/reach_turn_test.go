package store

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// mustCampaignOf imports the given recipients as one campaign.
func mustCampaignOf(t *testing.T, st *Store, name string, phones []string) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i, p := range phones {
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: p, Phone: p}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReachBlockedCampaignYieldsItsTurn: campaign A's recipients are all
// new to a portfolio whose window is full, B's are all in the window and
// cost nothing. A cannot use a turn until the window makes room, so B
// takes every token, at the account's full rate; A's rows are put off
// until then, not read again at every claim.
func TestReachBlockedCampaignYieldsItsTurn(t *testing.T) {
	const n = 30
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", n, 0)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	joinPortfolio(t, st, "a", "acme")
	seed := mustCampaign(t, st, "seed", n) // phone(0…n-1) fill the window at t0
	cs, err := st.ClaimN(t.Context(), seed.ID, "r0", t0, n)
	if err != nil || len(cs) != n {
		t.Fatalf("seed: %d claims, %v", len(cs), err)
	}
	for _, c := range cs {
		mustSent(t, st, c)
	}
	// From now on one token a second.
	if _, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Rate: ptr(1.0), Burst: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for i := range n {
		fresh = append(fresh, phone(1000+i))
	}
	a := mustCampaignOf(t, st, "a-new", fresh)
	b := mustCampaign(t, st, "b-known", n) // phone(0…n-1) again: in the window
	sa := &sender{name: "a", id: a.ID, runner: "ra", from: 10 * time.Second}
	sb := &sender{name: "b", id: b.ID, runner: "rb", from: 10 * time.Second}
	play(t, st, clk, 10*time.Second+n*time.Second, time.Second, sa, sb)

	if len(sa.tokens) != 0 {
		t.Errorf("a took %d tokens with its portfolio's window full", len(sa.tokens))
	}
	if len(sb.tokens) != n || sb.tokens[n-1] != 10*time.Second+(n-1)*time.Second {
		t.Fatalf("b took %d tokens (%v), want all %d, one a second from 10 s", len(sb.tokens), sb.tokens, n)
	}
	// B's sends renewed its recipients: the window makes room when the
	// first of them leaves, 24 h after 10 s. A's claim puts its rows off,
	// where no claim reads them (those put off before B's sends, until the
	// window's end as it was then).
	frees := at(24*time.Hour + 10*time.Second)
	_, err = st.ClaimN(t.Context(), a.ID, "ra", at(time.Hour), n)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitReach || we.Until.After(frees) || !we.Until.After(at(time.Hour)) {
		t.Errorf("a's claim an hour later: %v, want a reach wait until %v at the latest", err, frees)
	}
	var due int
	if err := st.db.QueryRow(`SELECT count(*) FROM messages WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at <= ?`,
		a.ID, at(2*time.Hour).UnixNano()).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if due != 0 {
		t.Errorf("%d of a's rows still due, want every one put off", due)
	}
	_, err = st.ClaimN(t.Context(), a.ID, "ra", at(2*time.Hour), n)
	if !errors.As(err, &we) || we.Reason != campaign.WaitReach || we.Until.After(frees) || !we.Until.After(at(2*time.Hour)) {
		t.Errorf("a's claim with every row put off: %v, want a reach wait until %v at the latest", err, frees)
	}
	clk.Set(frees)
	got, err := st.ClaimN(t.Context(), a.ID, "ra", frees, n)
	if err != nil || len(got) != 1 {
		t.Fatalf("a's claim once the window made room: %d claims (%v), want the one recipient it has room for", len(got), err)
	}
}
