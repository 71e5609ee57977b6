package claim

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

var t0 = storetest.T0

func openStore(t *testing.T, now *time.Time) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "wasend.db"),
		driver.Options{Now: func() time.Time { return *now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A claim that admitted nothing waits with the same kinds whichever gate
// refused: the shared gate's refusals (a portfolio's reach among them)
// give the local claim's waits.
func TestWaitOfEitherGate(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	c := storetest.MustCampaign(t, st, "refused", 2)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	tests := []struct {
		name      string
		r         refusal
		deferred  time.Time
		heldReach time.Time
		heldCap   time.Time
		want      campaign.WaitReason
		wantUntil time.Time
	}{
		{"tokens", refusal{true, ratelimit.ReasonTokens, sec(3), time.Time{}}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitTokens, sec(3)},
		{"tokens, a row put off comes due first", refusal{true, ratelimit.ReasonTokens, sec(3), time.Time{}}, sec(2), time.Time{}, time.Time{}, campaign.WaitTokens, sec(2)},
		{"tokens, a portfolio makes room first", refusal{true, ratelimit.ReasonTokens, sec(30), sec(20)}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitTokens, sec(20)},
		{"global", refusal{true, ratelimit.ReasonGlobal, sec(4), time.Time{}}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitGlobal, sec(4)},
		{"capped: no time helps", refusal{true, ratelimit.ReasonCapped, time.Time{}, time.Time{}}, sec(2), time.Time{}, time.Time{}, campaign.WaitCapped, time.Time{}},
		{"reach (shared)", refusal{true, limits.ReasonReach, sec(90), sec(90)}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitReach, sec(90)},
		{"every number refused for the reach (local)", refusal{true, ratelimit.ReasonEmpty, time.Time{}, sec(60)}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitReach, sec(60)},
		{"capped, but a portfolio makes room", refusal{true, ratelimit.ReasonCapped, time.Time{}, sec(60)}, time.Time{}, time.Time{}, time.Time{}, campaign.WaitReach, sec(60)},
		{"every row put off for the pair gap", refusal{}, sec(6), time.Time{}, time.Time{}, campaign.WaitRetry, sec(6)},
		{"every row held for the reach", refusal{}, time.Time{}, sec(70), time.Time{}, campaign.WaitReach, sec(70)},
		{"every row held for a sticky number's cap", refusal{}, time.Time{}, time.Time{}, sec(60), campaign.WaitCapped, sec(60)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got error
			w := waits{now: t0, deferred: tt.deferred, heldReach: tt.heldReach, heldCap: tt.heldCap}
			if err := st.WithClaim(t.Context(), func(tx driver.ClaimTx) error {
				got = w.wait(t.Context(), tx, c.ID, tt.r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var we *campaign.WaitError
			if !errors.As(got, &we) || we.Reason != tt.want || !we.Until.Equal(tt.wantUntil) {
				t.Errorf("wait %v, want %s until %v", got, tt.want, tt.wantUntil)
			}
		})
	}
}

// A claim that waits for a full portfolio waits first for rows put off
// before it (they may be recipients the window holds), and never past the
// campaign's validity.
func TestWaitForReachMeetsRowsPutOff(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	c := storetest.MustCampaign(t, st, "put off", 2)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	var got, expired error
	if err := st.WithClaim(t.Context(), func(tx driver.ClaimTx) error {
		due, err := tx.Due(t.Context(), c.ID, t0, 2)
		if err != nil || len(due) != 2 {
			t.Fatalf("due rows: %d, %v", len(due), err)
		}
		if err := tx.PutOff(t.Context(), due[0].ID, sec(40), driver.PutOffNone); err != nil {
			return err
		}
		// Held for the reach: what this claim waits for, not before it.
		if err := tx.PutOff(t.Context(), due[1].ID, sec(10), driver.PutOffReach); err != nil {
			return err
		}
		r := refusal{refused: true, reason: ratelimit.ReasonCapped, freed: sec(60)}
		got = waits{now: t0}.wait(t.Context(), tx, c.ID, r)
		expired = waits{now: t0, deadline: sec(30)}.wait(t.Context(), tx, c.ID, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var we *campaign.WaitError
	if !errors.As(got, &we) || we.Reason != campaign.WaitRetry || !we.Until.Equal(sec(40)) {
		t.Errorf("wait %v, want a retry at the row put off (+40s)", got)
	}
	if !errors.As(expired, &we) || we.Reason != campaign.WaitRetry || !we.Until.Equal(sec(30)) {
		t.Errorf("wait with a deadline at +30s: %v, want a retry at the deadline", expired)
	}
}

// Of two portfolios' refusals, the row waits for the one that lets it go
// first: a known end before none (caps), the earlier end before the later.
func TestEarlierRefusal(t *testing.T) {
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	capped := limits.Admission{Reason: ratelimit.ReasonCapped}
	tokens3 := limits.Admission{Reason: ratelimit.ReasonTokens, Until: at(3)}
	pair2 := limits.Admission{Reason: limits.ReasonPair, Until: at(2)}
	tests := []struct {
		name string
		a, b limits.Admission
		want limits.Admission
	}{
		{"the first refusal", limits.Admission{}, capped, capped},
		{"a known end before a cap", capped, tokens3, tokens3},
		{"a cap does not replace a known end", tokens3, capped, tokens3},
		{"the earlier end", tokens3, pair2, pair2},
		{"not the later one", pair2, tokens3, pair2},
	}
	for _, tt := range tests {
		if got := earlierRefusal(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
