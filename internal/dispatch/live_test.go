package dispatch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// TestLiveChanges: limits changed from "another shell" (a second Store on
// the same file) reach a running engine within its poll interval, without
// a restart.
func TestLiveChanges(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{})
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 0.2, Burst: 15, DailyCap: 10000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(400)

	other, err := store.Open(e.ctx, e.path, driver.Options{Now: e.clock.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	speedUp, disable := start.Add(2*time.Minute), start.Add(4*time.Minute)
	var once1, once2 sync.Once
	e.clock.OnAdvance = func(_, to time.Time) {
		if !to.Before(speedUp) {
			once1.Do(func() {
				if err := other.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1, Burst: 15, DailyCap: 10000}); err != nil {
					t.Error(err)
				}
			})
		}
		if !to.Before(disable) {
			once2.Do(func() {
				on := true
				if _, err := other.UpdateAccount(e.ctx, "a", campaign.AccountChange{Disabled: &on}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	const poll = 2 * time.Second
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2}, Poll: poll, Observe: func(ev dispatch.Event) {
		if ev.Kind == dispatch.EventWait && ev.Wait.Reason == campaign.WaitNoAccount {
			cancel()
		}
	}})
	if err := eng.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want it cancelled once no account is left", err)
	}

	times := e.claims()["a"]
	count := func(from, to time.Time) int {
		n := 0
		for _, at := range times {
			if !at.Before(from) && at.Before(to) {
				n++
			}
		}
		return n
	}
	// Before the change: burst 15, then one per 5 s.
	if got := count(start, speedUp); got < 15+23 || got > 15+25 {
		t.Errorf("%d sends in the first 2 minutes at 1/5s, want about 39", got)
	}
	// After it (give the engine one poll to notice): one per second.
	if got := count(speedUp.Add(poll), disable); got < 115 || got > 119 {
		t.Errorf("%d sends in the 2 minutes after the rate went to 1/s, want about 118", got)
	}
	if got := count(disable.Add(poll), start.Add(24*time.Hour)); got != 0 {
		t.Errorf("%d sends after the account was disabled", got)
	}
}
