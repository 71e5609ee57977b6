package readmodel_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// playCampaign imports n recipients (lines 2…n+1) and sends them one per
// second from t0, answering each claim with outcome(line, attempt); a nil
// outcome leaves the row in flight. Each answer comes 500 ms after its
// claim. It returns the claims made, in order.
func playCampaign(t *testing.T, st driver.Driver, n int, outcome func(line, attempt int) *campaign.Outcome) (campaign.Campaign, []campaign.Claim) {
	t.Helper()
	c := storetest.MustCampaign(t, st, "detail", n)
	var claims []campaign.Claim
	for i := 0; ; i++ {
		now := at(time.Duration(i) * time.Second)
		cl, err := storetest.One(claim.New(st).ClaimN(t.Context(), c.ID, "r1", now, 1))
		var we *campaign.WaitError
		if errors.Is(err, campaign.ErrDone) || errors.As(err, &we) {
			break
		}
		if err != nil {
			t.Fatalf("claim at +%ds: %v", i, err)
		}
		claims = append(claims, cl)
		o := outcome(cl.Message.Line, cl.Message.Attempts)
		if o == nil {
			continue
		}
		if err := st.RecordAll(t.Context(), "r1", []campaign.Result{{Claim: cl, Outcome: *o, At: now.Add(500 * time.Millisecond)}}); err != nil {
			t.Fatal(err)
		}
	}
	return c, claims
}

// detailOutcome answers lines 2…10 of a campaign with one of each:
// sent, failed (two of one code), throttled twice then sent, unknown,
// account-fatal (its account dropped), and in flight.
func detailOutcome(line, attempt int) *campaign.Outcome {
	sent := func(line int) *campaign.Outcome {
		return &campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", line), Class: "ok"}
	}
	failed := func(code int, msg string) *campaign.Outcome {
		return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: code, Error: msg, Class: "permanent"}
	}
	switch line {
	case 2, 3:
		return sent(line)
	case 4:
		return failed(131026, "(#131026) Message undeliverable: line 4")
	case 5:
		return failed(131026, "(#131026) Message undeliverable: line 5")
	case 6:
		return failed(131050, "(#131050) User stopped marketing messages")
	case 7: // throttled twice, then sent
		if attempt < 3 {
			return &campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 130429, Error: "rate limit hit", Class: "throttled"}
		}
		return sent(line)
	case 8:
		return &campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "timeout", Class: "ambiguous"}
	case 9:
		return &campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 190, Error: "(#190) token expired",
			Class: "account-fatal", DropAccount: true}
	}
	return nil // line 10 stays in flight
}

func TestCampaignDetail(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		storetest.MustAccount(t, st, "a", campaign.TierActive, storetest.Limited(1, 4, 100))
		storetest.MustAccount(t, st, "b", campaign.TierActive, storetest.Limited(1, 4, 100))
		c, claims := playCampaign(t, st, 9, detailOutcome)
		if len(claims) != 11 {
			t.Fatalf("%d claims, want 11 (9 rows, 2 of them retried)", len(claims))
		}
		clk.Set(at(time.Hour))

		d, err := readmodel.New(st).CampaignDetail(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Campaign.ID != c.ID || d.Campaign.Name != "detail" || d.Campaign.Spec.Template != "hello" {
			t.Errorf("campaign = %+v", d.Campaign)
		}
		wantCounts := campaign.Counts{campaign.Sent: 3, campaign.Failed: 4, campaign.Unknown: 1, campaign.Sending: 1}
		for _, s := range campaign.States {
			if d.Counts[s] != wantCounts[s] {
				t.Errorf("count %s = %d, want %d", s, d.Counts[s], wantCounts[s])
			}
		}
		wantErrors := []readmodel.ErrorGroup{
			{Code: 131026, Count: 2, Sample: "(#131026) Message undeliverable: line 4"},
			{Code: 190, Count: 1, Sample: "(#190) token expired"},
			{Code: 131050, Count: 1, Sample: "(#131050) User stopped marketing messages"},
		}
		if !slices.Equal(d.Errors, wantErrors) {
			t.Errorf("errors =\n%+v\nwant\n%+v", d.Errors, wantErrors)
		}

		// Expected split, from the claims themselves: the last claim of a row
		// decides which account its outcome counts for.
		want := map[string]*readmodel.AccountSplit{}
		lastAcct := map[int]string{}
		for _, cl := range claims {
			name := cl.Account.Name
			if want[name] == nil {
				want[name] = &readmodel.AccountSplit{Account: name}
			}
			want[name].Attempts++
			if cl.Message.Line == 7 && cl.Message.Attempts < 3 {
				want[name].Throttled++
			}
			lastAcct[cl.Message.Line] = name
		}
		for line, name := range lastAcct {
			switch {
			case line == 2 || line == 3 || line == 7:
				want[name].Sent++
			case line >= 4 && line <= 6 || line == 9:
				want[name].Failed++
			case line == 8:
				want[name].Unknown++
			}
		}
		if len(d.Accounts) != len(want) {
			t.Fatalf("accounts = %+v, want %d of them", d.Accounts, len(want))
		}
		for _, a := range d.Accounts {
			if w := want[a.Account]; w == nil || a != *w {
				t.Errorf("account split %+v, want %+v", a, w)
			}
		}
		if !slices.IsSortedFunc(d.Accounts, func(x, y readmodel.AccountSplit) int { return strings.Compare(x.Account, y.Account) }) {
			t.Errorf("accounts not sorted by name: %+v", d.Accounts)
		}

		// The first claim at t0; the last answer 500 ms after the ninth claim
		// (the tenth, at +10 s, is still in flight: its claim counts).
		if !d.FirstAttempt.Equal(t0) || !d.LastAttempt.Equal(at(10*time.Second)) {
			t.Errorf("first, last attempt = %v, %v; want t0, +10s", d.FirstAttempt, d.LastAttempt)
		}
		if d.Elapsed() != 10*time.Second || d.SendRate() != 0.3 {
			t.Errorf("elapsed %v, rate %v; want 10s, 0.3/s", d.Elapsed(), d.SendRate())
		}
		if d.Stats.Attempts != 11 || d.Stats.Throttled != 2 || d.Stats.MessagesAttempted != 9 {
			t.Errorf("stats = %+v", d.Stats)
		}
		if len(d.Dropped) != 1 || d.Dropped[0].ErrorCode != 190 || d.Dropped[0].Account != lastAcct[9] {
			t.Errorf("dropped = %+v, want the account of line 9 with code 190", d.Dropped)
		}
	})
}

func TestCampaignDetailUntouched(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, newFakeClock())
		c := storetest.MustCampaign(t, st, "fresh", 3)
		d, err := readmodel.New(st).CampaignDetail(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Counts[campaign.Pending] != 3 || d.Errors != nil || d.Accounts != nil || d.Dropped != nil {
			t.Errorf("detail of an unsent campaign = %+v", d)
		}
		if !d.FirstAttempt.IsZero() || !d.LastAttempt.IsZero() || d.Elapsed() != 0 || d.SendRate() != 0 {
			t.Errorf("timings of an unsent campaign: %v %v %v %v", d.FirstAttempt, d.LastAttempt, d.Elapsed(), d.SendRate())
		}
		if _, err := readmodel.New(st).CampaignDetail(t.Context(), 99); !errors.Is(err, campaign.ErrNotFound) {
			t.Errorf("detail of campaign 99: %v, want ErrNotFound", err)
		}
	})
}
