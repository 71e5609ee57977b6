package claim

import (
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// wroteTo stores an inbound message from key (a number or a user id) to
// the business number phoneNumberID at at, as the webhook's drain does.
func wroteTo(t *testing.T, st *store.Store, key, phoneNumberID string, at time.Time) {
	t.Helper()
	if err := st.WithInbox(t.Context(), func(tx driver.InboxTx, now time.Time) error {
		_, err := tx.KeepInbound(t.Context(), campaign.InboundRow{ID: fmt.Sprint("wamid.in.", key, phoneNumberID, at.UnixNano()), Phone: key,
			PhoneNumberID: phoneNumberID, At: at, ReceivedAt: at, Type: "text", Text: "hi"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestClaimWindowPerNumber: Meta keeps the customer service window per
// (business number, person), and so does the claim of a text campaign: a
// recipient who wrote to number a gets free-form text from a only, one who
// wrote to b from b, one who wrote to both from either; one whose only
// open window is with a number the campaign does not send from, or whose
// window closed, is skipped with the reason. A recipient known by a user
// id whose message was filed under the number linked to it counts as
// having written. When a has no token, a's recipient waits for it while
// b's go on. The local limits and the shared ones (Redis) agree.
func TestClaimWindowPerNumber(t *testing.T) {
	var r *redistest.Server
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "local limits", true: "shared limits"}[shared], func(t *testing.T) {
			if shared {
				if r == nil {
					r = redistest.Start(t)
				}
				r.Client(t).FlushAll(t.Context())
			}
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierNew, limited(0.001, 1, 100)) // one token, the next in ~17 min
			mustAccount(t, st, "b", campaign.TierNew, fast)
			const carl = "US.55" // known by a user id; wrote from the number linked to it
			rows := []string{phone(0), phone(1), phone(2), phone(3), phone(4), carl, phone(5), phone(6)}
			c := recipientsCampaign(t, st, "text", campaign.Spec{Kind: campaign.KindText, Text: "Hi"}, rows...)
			if err := st.SetServiceWindow(t.Context(), c.ID, true); err != nil {
				t.Fatal(err)
			}
			wroteTo(t, st, phone(0), "pn-a", at(-time.Hour))
			wroteTo(t, st, phone(1), "pn-b", at(-time.Hour))
			wroteTo(t, st, phone(2), "pn-a", at(-2*time.Hour))
			wroteTo(t, st, phone(2), "pn-b", at(-3*time.Hour))
			wroteTo(t, st, phone(3), "pn-a", at(-25*time.Hour))
			wroteTo(t, st, phone(4), "pn-c", at(-time.Hour)) // a number of the business this campaign does not send from
			wroteTo(t, st, phone(9), "pn-b", at(-time.Hour))
			learnLinks(t, st, campaign.IdentityLink{Phone: phone(9), UserID: carl})
			wroteTo(t, st, phone(5), "pn-a", at(-time.Hour)) // a's token is gone by this row
			wroteTo(t, st, phone(6), "pn-b", at(-time.Hour))
			if shared {
				pool, err := redisgate.Dial(r.URL())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pool.Close() })
				if err := st.ShareLimits(t.Context(), pool, redisgate.Unavailable); err != nil {
					t.Fatal(err)
				}
				startDay(t, sharedHost{st: st, pool: pool}, "a", "b")
			}

			cs, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, cl := range cs {
				got[cl.Message.Phone] = cl.Account.Name
			}
			// 2 wrote to both: a has no token left after 0, b sends.
			want := map[string]string{phone(0): "a", phone(1): "b", phone(2): "b", carl: "b", phone(6): "b"}
			if len(got) != len(want) {
				t.Errorf("claimed %v; want %v", got, want)
			}
			for p, acct := range want {
				if got[p] != acct {
					t.Errorf("%s sent from %q, want %s (the number they wrote to)", p, got[p], acct)
				}
			}
			for p, reason := range map[string]string{
				phone(3): "no customer service window: last message from them " + at(-25*time.Hour).UTC().Format(time.RFC3339),
				phone(4): "no customer service window: last message from them " + at(-time.Hour).UTC().Format(time.RFC3339) +
					" to number pn-c, which does not send this campaign",
			} {
				var why string
				if err := st.Reader().QueryRowContext(t.Context(), `SELECT error_message FROM messages WHERE phone = ? AND state = 'failed' AND error_code = ?`,
					p, campaign.CodeNoWindow).Scan(&why); err != nil || len(why) < len(reason) || why[:len(reason)] != reason {
					t.Errorf("the row of %s: %q, %v; want skipped %q…", p, why, err, reason)
				}
			}
			// a's recipient waits for a's next token, unsent.
			var (
				state string
				next  int64
			)
			if err := st.Reader().QueryRowContext(t.Context(), `SELECT state, next_attempt_at FROM messages WHERE phone = ?`, phone(5)).Scan(&state, &next); err != nil {
				t.Fatal(err)
			}
			if state != "pending" || !time.Unix(0, next).After(t0) {
				t.Errorf("%s: %s, next attempt %v; want pending, put off for a's token", phone(5), state, time.Unix(0, next).Sub(t0))
			}
			checkCounts(t, st, "per-number window", c.ID)
		})
	}
}
