package store

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
)

// TestSendingPathCompilesOnce: once warm, the sending path's transactions
// (the marks of requests started, then the outcomes recorded with the next
// rows claimed) compile no statement. The driver clears a statement's
// bindings after every run, and SQLite 3.54 recompiles, at its next run,
// any statement whose plan weighed a bound value (a bound LIMIT; an `x = ?`
// term in a statement with an ORDER BY or a join): ~200,000 instructions
// each, twice a claim before (the due rows and the budget). SQLite calls
// the authorizer only while it compiles.
func TestSendingPathCompilesOnce(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	unlimitedTiers(t, st)
	mustAccount(t, st, "main", campaign.TierNew, campaign.Overrides{})
	c := mustCampaign(t, st, "spring", 100)
	const batch = 8
	now := t0
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", now, batch)
	if err != nil {
		t.Fatal(err)
	}
	var (
		compiled atomic.Int64
		what     atomic.Value
	)
	for round := range 4 {
		if round == 2 { // warm: every text has been seen, and recompiled since the authorizer came
			compiled.Store(0)
		}
		if round == 1 { // setting an authorizer expires every statement
			w, err := st.writer(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Raw(func(dc any) error {
				dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(func(op int, a, b, _ string) int {
					if op == sqlite3.SQLITE_TRANSACTION {
						return sqlite3.SQLITE_OK // the driver's BEGIN and COMMIT: compiled at each, and tiny
					}
					if compiled.Add(1) == 1 {
						what.Store(fmt.Sprintf("action %d on %s %s", op, a, b))
					}
					return sqlite3.SQLITE_OK
				})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		now = now.Add(time.Millisecond) // a claim's instant is bound: a new value each time
		if refused, err := st.Start(t.Context(), "r1", cs, now); err != nil || len(refused) > 0 {
			t.Fatalf("round %d: start: %v, %d refused", round, err, len(refused))
		}
		rs := make([]campaign.Result, len(cs))
		for i, cl := range cs {
			rs[i] = campaign.Result{Claim: cl, At: now,
				Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}}
		}
		var claimErr error
		if cs, claimErr, err = st.RecordAndClaimN(t.Context(), "r1", rs, c.ID, now, batch, 0); err != nil || claimErr != nil {
			t.Fatalf("round %d: %v, %v", round, err, claimErr)
		}
		if len(cs) != batch {
			t.Fatalf("round %d claimed %d rows, want %d", round, len(cs), batch)
		}
	}
	if n := compiled.Load(); n != 0 {
		t.Errorf("two warm transactions compiled statements (%d authorizer calls, the first %v), want none", n, what.Load())
	}
}
