package storetest

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store/driver"
)

// The sticky sender as the drivers store it: the number whose message the
// API last accepted for a recipient (claimsql.LastContacts reads it from
// the attempts of the claims the send log names, and its sent_at, into
// which a pair's next claim folds them: claimsql.LogClaims).

func (s suite) stickyTests() []sub {
	return []sub{
		{"follows the send accepted", s.testStickyFollowsTheSendAccepted},
		{"the latest send decides", s.testStickyLatestSendDecides},
		{"a row sent again", s.testStickyRowSentAgain},
		{"the claims named", s.testStickyClaimsNamed},
		{"a send adopted", s.testStickyAdopted},
	}
}

// A send binds its recipient to its number once the API accepted it, by
// either path of an outcome (plain ones in bulk, a held one alone), and
// still after its campaign was deleted; a request refused, failed or still
// in flight binds them to none.
func (s suite) testStickyFollowsTheSendAccepted(t *testing.T) {
	sent := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}
	held := sent
	held.Held = true
	tests := []struct {
		name    string
		outcome *campaign.Outcome // nil: still in flight
		deleted bool              // the first campaign is deleted after its send
		want    string
	}{
		{name: "accepted", outcome: &sent, want: "a"},
		{name: "accepted, held for quality", outcome: &held, want: "a"},
		{name: "accepted, its campaign since deleted", outcome: &sent, deleted: true, want: "a"},
		{name: "failed", outcome: &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable",
			Class: "permanent"}, want: "b"},
		{name: "refused, to retry", outcome: &campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 131000, Error: "try again",
			Class: "transient", RetryAt: at(time.Minute), Refund: true}, want: "b"},
		{name: "in flight", want: "b"},
		{name: "in flight, its campaign since deleted", deleted: true, want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := s.openTest(t, clk)
			// a's bucket refills slowly: half empty after its send, b's is
			// full, Pick's choice unless the recipient is a's.
			MustAccount(t, st, "a", campaign.TierNew, Limited(0.0001, 2, 1000))
			first := MustCampaign(t, st, "first", 1)
			c := mustClaim(t, st, first.ID, "r1", t0)
			if tt.outcome != nil {
				if err := record(t, st, c, "r1", *tt.outcome, t0); err != nil {
					t.Fatal(err)
				}
			}
			if tt.deleted {
				clk.Set(at(driver.LiveRunner + time.Second))
				if err := st.DeleteCampaign(t.Context(), first.ID); err != nil {
					t.Fatal(err)
				}
			}
			MustAccount(t, st, "b", campaign.TierNew, Limited(1, 5, 1000))
			second := MustCampaign(t, st, "second", 1) // the same recipient
			clk.Set(at(time.Hour))
			if got := mustClaim(t, st, second.ID, "r1", at(time.Hour)); got.Account.Name != tt.want {
				t.Errorf("sent from %s, want %s", got.Account.Name, tt.want)
			}
		})
	}
}

// The latest send accepted decides, wherever it is kept: b's send in a
// campaign that remains is later than a's in one since deleted.
func (s suite) testStickyLatestSendDecides(t *testing.T) {
	ctx := t.Context()
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, Limited(1, 5, 1000))
	sendFrom := func(clk *clock.Sim, name string, when time.Duration, want string) campaign.Campaign {
		t.Helper()
		c := MustCampaign(t, st, name, 1)
		clk.Set(at(when))
		cl := mustClaim(t, st, c.ID, "r1", at(when))
		if cl.Account.Name != want {
			t.Fatalf("%s sent from %s, want %s", name, cl.Account.Name, want)
		}
		if err := record(t, st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid." + name, Class: "ok"}, at(when)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := sendFrom(clk, "first", 0, "a")
	MustAccount(t, st, "b", campaign.TierNew, Limited(0.0001, 2, 1000)) // half empty after its send: a is Pick's choice
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	sendFrom(clk, "second", time.Hour, "b") // a's recipient, a disabled: a break
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteCampaign(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	third := MustCampaign(t, st, "third", 1)
	clk.Set(at(2 * time.Hour))
	if got := mustClaim(t, st, third.ID, "r1", at(2*time.Hour)); got.Account.Name != "b" {
		t.Errorf("sent from %s, want b (the latest send's, though a is fuller)", got.Account.Name)
	}
}

// A row requeued after its send and sent again binds its recipient by its
// new send alone: here b's request failed, so the old send's time with the
// row's new account makes no sticky b (a, fuller, is Pick's choice).
func (s suite) testStickyRowSentAgain(t *testing.T) {
	ctx := t.Context()
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, Limited(1, 5, 1000))
	first := MustCampaign(t, st, "first", 1)
	c := mustClaim(t, st, first.ID, "r1", t0)
	if err := record(t, st, c, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}, t0); err != nil {
		t.Fatal(err)
	}
	MustAccount(t, st, "b", campaign.TierNew, Limited(0.0001, 2, 1000))
	if n, err := st.RequeueUndelivered(ctx, first.ID, at(time.Minute)); err != nil || n != 1 {
		t.Fatalf("requeue undelivered: %d, %v", n, err)
	}
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Minute))
	again := mustClaim(t, st, first.ID, "r1", at(time.Minute))
	if again.Account.Name != "b" {
		t.Fatalf("sent again from %s, want b", again.Account.Name)
	}
	if err := record(t, st, again, "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable",
		Class: "permanent"}, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	second := MustCampaign(t, st, "second", 1)
	clk.Set(at(time.Hour))
	if got := mustClaim(t, st, second.ID, "r1", at(time.Hour)); got.Account.Name != "a" {
		t.Errorf("sent from %s, want a: b's request failed", got.Account.Name)
	}
}

// The send log names a pair's last claim and the one before while that
// one is unanswered: a number's claims of one recipient, one after another
// or overlapping (the first still in flight when the second is made),
// bind them by any one accepted, through a failure, a refusal or the
// deletion of a campaign after; none accepted binds them to none.
func (s suite) testStickyClaimsNamed(t *testing.T) {
	sent := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}
	failed := campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable", Class: "permanent"}
	refused := campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 131000, Error: "try again", Class: "transient",
		RetryAt: at(2 * time.Hour), Refund: true}
	tests := []struct {
		name          string
		first, second campaign.Outcome
		overlap       bool // the second claim made while the first is in flight
		deleteFirst   bool // the first campaign deleted before the third claim
		want          string
	}{
		{name: "accepted, then failed", first: sent, second: failed, want: "a"},
		{name: "accepted, then refused", first: sent, second: refused, want: "a"},
		{name: "accepted twice", first: sent, second: sent, want: "a"},
		{name: "failed, then accepted", first: failed, second: sent, want: "a"},
		{name: "failed twice", first: failed, second: failed, want: "b"},
		{name: "accepted, then failed, the first campaign deleted", first: sent, second: failed, deleteFirst: true, want: "a"},
		{name: "overlapping: accepted, then failed", first: sent, second: failed, overlap: true, want: "a"},
		{name: "overlapping: accepted, then refused", first: sent, second: refused, overlap: true, want: "a"},
		{name: "overlapping: failed, then accepted", first: failed, second: sent, overlap: true, want: "a"},
		{name: "overlapping: failed twice", first: failed, second: refused, overlap: true, want: "b"},
		{name: "overlapping: accepted, then failed, the first campaign deleted", first: sent, second: failed, overlap: true,
			deleteFirst: true, want: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := s.openTest(t, clk)
			// a's bucket refills slowly: half empty after its two
			// claims; b's (added before the third) is full, Pick's choice
			// unless the recipient is a's.
			MustAccount(t, st, "a", campaign.TierNew, Limited(0.0001, 4, 1000))
			first := MustCampaign(t, st, "first", 1)
			c1 := mustClaim(t, st, first.ID, "r1", t0)
			when := time.Hour
			if tt.overlap {
				when = 10 * time.Second // past the pair gap, the first in flight
			} else if err := record(t, st, c1, "r1", tt.first, at(time.Second)); err != nil {
				t.Fatal(err)
			}
			second := MustCampaign(t, st, "second", 1)
			clk.Set(at(when))
			c2 := mustClaim(t, st, second.ID, "r1", at(when))
			if c2.Account.Name != "a" {
				t.Fatalf("second claim from %s, want a", c2.Account.Name)
			}
			if tt.overlap {
				if err := record(t, st, c1, "r1", tt.first, at(when+time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if err := record(t, st, c2, "r1", tt.second, at(when+time.Second)); err != nil {
				t.Fatal(err)
			}
			if tt.deleteFirst {
				clk.Set(at(when + driver.LiveRunner + time.Second))
				if err := st.DeleteCampaign(t.Context(), first.ID); err != nil {
					t.Fatal(err)
				}
			}
			MustAccount(t, st, "b", campaign.TierNew, Limited(1, 5, 1000))
			third := MustCampaign(t, st, "third", 1)
			clk.Set(at(3 * time.Hour))
			if got := mustClaim(t, st, third.ID, "r1", at(3*time.Hour)); got.Account.Name != tt.want {
				t.Errorf("sent from %s, want %s", got.Account.Name, tt.want)
			}
		})
	}
}

// A send whose answer was lost binds its recipient once a status proves
// it (the row adopted); without the status it binds them to none.
func (s suite) testStickyAdopted(t *testing.T) {
	s.needRules(t)
	for _, status := range []string{"delivered", ""} {
		t.Run("status "+status, func(t *testing.T) {
			clk := newFakeClock()
			st := s.openTest(t, clk)
			// main's bucket refills slowly: half empty after its send.
			if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "main", PhoneNumberID: inboxPNID, Tier: campaign.TierNew,
				TokenEnv: "WA_TOKEN", Overrides: Limited(0.0001, 2, 1000)}); err != nil {
				t.Fatal(err)
			}
			first := MustCampaign(t, st, "first", 1)
			c := mustClaim(t, st, first.ID, "r1", t0)
			if err := record(t, st, c, "r1", campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "timeout"}, at(time.Second)); err != nil {
				t.Fatal(err)
			}
			clk.Set(at(time.Minute))
			want := "b"
			if status != "" {
				if rep := s.drain(t, st, putBackStatus(t, first, c, "wamid.1", status, 30*time.Second, true, 0)); rep.Adopted != 1 {
					t.Fatalf("report %+v; want the row adopted", rep)
				}
				want = "main"
			}
			MustAccount(t, st, "b", campaign.TierNew, Limited(1, 5, 1000))
			second := MustCampaign(t, st, "second", 1) // the same recipient
			clk.Set(at(time.Hour))
			if got := mustClaim(t, st, second.ID, "r1", at(time.Hour)); got.Account.Name != want {
				t.Errorf("sent from %s, want %s", got.Account.Name, want)
			}
		})
	}
}
