package store

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// A campaign whose rows need a customer service window claims only rows
// whose recipient wrote within 24 h of the claim; the others fail with
// the import's reason (code -3), unsent. A window open at the import that
// closed since skips the row at its claim. Without the check, every row
// goes.
func TestClaimServiceWindow(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(1000, 1000, 1_000_000))
	ctx := t.Context()
	t0 := clk.Now()
	wroteTo := func(number string, i int, at time.Time) {
		t.Helper()
		if _, err := st.db.ExecContext(ctx, `INSERT INTO inbound_messages (id, phone, at, received_at, phone_number_id, type, text)
			VALUES (?, ?, ?, ?, ?, 'text', 'hi')`, number+phone(i)+at.String(), phone(i), at.UnixNano(), at.UnixNano(), number); err != nil {
			t.Fatal(err)
		}
	}
	wrote := func(i int, at time.Time) { wroteTo("pn-a", i, at) }
	// 0 wrote an hour ago, and 25 h ago before that; 1 wrote 23 h ago;
	// 2 wrote 25 h ago; 3 never (to a, the campaign's number; to another
	// number of the business an hour ago).
	wrote(0, t0.Add(-25*time.Hour))
	wrote(0, t0.Add(-time.Hour))
	wrote(1, t0.Add(-23*time.Hour))
	wrote(2, t0.Add(-25*time.Hour))
	wroteTo("pn-other", 3, t0.Add(-time.Hour))
	last, err := lastInbound(ctx, st.db, []string{phone(0), phone(1), phone(2), phone(3), phone(4)})
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 4 || !last[phone(0)]["pn-a"].Equal(t0.Add(-time.Hour)) || !last[phone(2)]["pn-a"].Equal(t0.Add(-25*time.Hour)) ||
		len(last[phone(3)]) != 1 || !last[phone(3)]["pn-other"].Equal(t0.Add(-time.Hour)) {
		t.Errorf("LastInbound = %v", last)
	}

	// One person is one person: a message filed under a user id counts
	// for the number linked to it, and one filed under a number for the
	// user id linked to it; a user id nobody linked is looked up as is.
	for _, q := range []string{
		`INSERT INTO inbound_messages (id, phone, at, received_at, phone_number_id) VALUES ('u5', 'US.5', 1, 1, 'pn-a'), ('p6', '` + phone(6) + `', 2, 2, 'pn-a'), ('u7', 'US.7', 3, 3, 'pn-a')`,
		`INSERT INTO recipient_links (user_id, phone, seen_at) VALUES ('US.5', '` + phone(5) + `', 0), ('US.6', '` + phone(6) + `', 0)`,
	} {
		if _, err := st.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if last, err = lastInbound(ctx, st.db, []string{phone(5), "US.6", "US.7", "US.8"}); err != nil {
		t.Fatal(err)
	}
	if len(last) != 3 || last[phone(5)]["pn-a"].UnixNano() != 1 || last["US.6"]["pn-a"].UnixNano() != 2 || last["US.7"]["pn-a"].UnixNano() != 3 {
		t.Errorf("LastInbound through links = %v", last)
	}

	checked := mustCampaign(t, st, "text", 4)
	if err := st.SetServiceWindow(ctx, checked.ID, true); err != nil {
		t.Fatal(err)
	}
	unchecked := mustCampaign(t, st, "template", 4)

	// Two hours on, 1's window (opened 23 h ago) has closed too.
	clk.Set(t0.Add(2 * time.Hour))
	cs, err := st.ClaimN(ctx, checked.ID, "r1", clk.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Message.Phone != phone(0) {
		t.Fatalf("claimed %v; want only %s, who wrote within 24 h", cs, phone(0))
	}
	for i, want := range map[int]string{
		1: "no customer service window: last message from them " + t0.Add(-23*time.Hour).UTC().Format(time.RFC3339) +
			", the window closed " + t0.Add(time.Hour).UTC().Format(time.RFC3339),
		2: "no customer service window: last message from them " + t0.Add(-25*time.Hour).UTC().Format(time.RFC3339),
		3: "no customer service window: last message from them " + t0.Add(-time.Hour).UTC().Format(time.RFC3339) +
			" to number pn-other, which does not send this campaign",
	} {
		var (
			state, why string
			code       int
		)
		if err := st.db.QueryRowContext(ctx, `SELECT state, error_code, error_message FROM messages WHERE campaign_id = ? AND phone = ?`,
			checked.ID, phone(i)).Scan(&state, &code, &why); err != nil {
			t.Fatal(err)
		}
		if state != "failed" || code != campaign.CodeNoWindow || !strings.HasPrefix(why, want) {
			t.Errorf("row of %s: %s %d %q; want failed %d %q…", phone(i), state, code, why, campaign.CodeNoWindow, want)
		}
	}
	if cs, err := st.ClaimN(ctx, unchecked.ID, "r1", clk.Now(), 10); err != nil || len(cs) != 4 {
		t.Errorf("a campaign without the check claimed %d rows, %v; want all 4", len(cs), err)
	}
	if err := st.CheckCounts(ctx); err != nil {
		t.Error(err)
	}
}
