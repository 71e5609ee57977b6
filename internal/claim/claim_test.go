package claim

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The engine settles a stopped runner's rows before it ends only when its
// Ledger lists the holders (a type assertion in dispatch): the claim's must.
var _ dispatch.HolderLister = (*Ledger)(nil)

// A claim made with a clock read before it waited for the write lock is
// made at its buckets' stamp, never before: its tokens are spent when the
// bucket had them, and the claims' instants (the attempts' claimed_at)
// never show more requests in a stretch than the bucket allowed
// (TestCrashResume's "8 requests in 54 ms, at most 7").
func TestClaimNeverBeforeItsBuckets(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 2, 1000))
	c := storetest.MustCampaign(t, st, "stale", 4)
	l := New(st)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

	var all []campaign.Claim
	for _, step := range []struct {
		now  time.Time
		max  int
		want time.Time // the claims' instant
	}{
		{sec(0), 2, sec(0)}, // the burst
		{sec(2), 1, sec(2)}, // 2 tokens earned, 1 taken: the bucket's stamp is +2s
		// A stale clock: the token left at +2s is spent at +2s, not at +0.5s.
		{sec(0.5), 1, sec(2)},
	} {
		cs, err := l.ClaimN(t.Context(), c.ID, "r1", step.now, step.max)
		if err != nil || len(cs) != step.max {
			t.Fatalf("claim at %v: %d claims, %v; want %d", step.now.Sub(t0), len(cs), err, step.max)
		}
		for _, cl := range cs {
			if !cl.At.Equal(step.want) {
				t.Errorf("claim at %v: made at %v, want %v (the bucket's stamp)", step.now.Sub(t0), cl.At.Sub(t0), step.want.Sub(t0))
			}
		}
		all = append(all, cs...)
	}
	// The attempts say the same, and within the bucket: burst 2, 1/s.
	rows, err := st.Reader().QueryContext(t.Context(), `SELECT claimed_at FROM attempts ORDER BY claimed_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var at []time.Time
	for rows.Next() {
		var ns int64
		if err := rows.Scan(&ns); err != nil {
			t.Fatal(err)
		}
		at = append(at, time.Unix(0, ns))
	}
	if len(at) != len(all) {
		t.Fatalf("%d attempts, want %d", len(at), len(all))
	}
	for i := range at {
		for j := i; j < len(at); j++ {
			if n, allowed := float64(j-i+1), 2+at[j].Sub(at[i]).Seconds(); n > allowed+1e-9 {
				t.Errorf("%v requests between +%v and +%v, at most %v", n, at[i].Sub(t0), at[j].Sub(t0), allowed)
			}
		}
	}
}
