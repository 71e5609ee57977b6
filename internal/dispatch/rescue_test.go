package dispatch_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/claim"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestDeadRunnerRowsRescued: another runner claimed rows and died (its
// heartbeat stopped); a live one keeps beating and answers late. The engine
// sends everything else, turns the dead runner's rows unknown once its
// heartbeat is stale — not only when a new run starts — and finishes within
// the stale period plus a few seconds, on a simulated clock.
func TestDeadRunnerRowsRescued(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{})
	e.addAccount("main", "100000000000001", campaign.TierActive)
	c := e.importN(10)

	for _, id := range []string{"dead", "live"} {
		if err := e.st.RegisterRunner(e.ctx, campaign.Runner{ID: id, CampaignID: c.ID, Host: "elsewhere", PID: 7,
			StartedAt: start, HeartbeatAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	deadClaims, err := claim.New(e.st).ClaimN(e.ctx, c.ID, "dead", start, 3)
	if err != nil {
		t.Fatal(err)
	}
	liveClaim, err := storetest.One(claim.New(e.st).ClaimN(e.ctx, c.ID, "live", start, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Both runners' requests are in flight.
	if refused, err := e.st.Start(e.ctx, "dead", append(deadClaims, liveClaim), start); err != nil || len(refused) > 0 {
		t.Fatalf("start: %v refused, %v", refused, err)
	}
	// The live runner beats with the clock and records its answer 20 s in.
	answered := false
	e.clock.OnAdvance = func(_, to time.Time) {
		if err := e.st.Heartbeat(e.ctx, "live", to); err != nil {
			t.Error(err)
		}
		if !answered && to.Sub(start) >= 20*time.Second {
			answered = true
			if err := e.st.RecordAll(e.ctx, "live", []campaign.Result{{Claim: liveClaim, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.live"}, At: to}}); err != nil {
				t.Error(err)
			}
		}
	}

	var recovered int
	const stale = 30 * time.Second
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2}, Stale: stale, Observe: func(ev dispatch.Event) {
		if ev.Kind == dispatch.EventRecovered {
			recovered += ev.Count
		}
	}})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if took := e.clock.Now().Sub(start); took > stale+6*time.Second {
		t.Errorf("finished %v after the dead runner's last heartbeat, want within %v plus a few seconds", took, stale)
	}
	if recovered != len(deadClaims) {
		t.Errorf("EventRecovered counted %d rows, want %d", recovered, len(deadClaims))
	}
	rows := e.rows()
	for _, cl := range deadClaims {
		if got := rows[cl.Message.Phone].state; got != campaign.Unknown {
			t.Errorf("%s, claimed by the dead runner: %s, want unknown", cl.Message.Phone, got)
		}
	}
	if got := rows[liveClaim.Message.Phone].state; got != campaign.Sent {
		t.Errorf("%s, claimed by the live runner: %s, want sent", liveClaim.Message.Phone, got)
	}
	n := map[campaign.State]int{}
	for _, r := range rows {
		n[r.state]++
	}
	if n[campaign.Sent] != 7 || n[campaign.Unknown] != 3 {
		t.Errorf("rows by state %v, want 7 sent and 3 unknown", n)
	}
	got, err := e.st.Campaign(e.ctx, c.ID)
	if err != nil || got.State != campaign.CampaignFinished {
		t.Errorf("campaign %+v, %v; want finished", got.State, err)
	}
}
