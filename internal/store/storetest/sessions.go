package storetest

import (
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

// A database server may end a driver's sessions at any moment: an
// administrator (pg_terminate_backend), a restart, the server's own
// timeouts (a host stopped inside a transaction). A host's next calls must
// go on, on new sessions, rather than end its run on the first error (found
// by the host-kill torture on Postgres: a survivor whose sessions were
// ended exited with "terminating connection due to administrator
// command", and its rows stayed pending).

func (s suite) sessionTests() []sub {
	return []sub{
		{"sessions ended by the server: each next call goes on", s.testSessionsEnded},
	}
}

func (s suite) testSessionsEnded(t *testing.T) {
	if s.h.EndSessions == nil {
		t.Skip("the driver keeps no server sessions (the harness gives no EndSessions)")
	}
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "sessions", 3)
	registerRunner(t, st, "r", c.ID, t0)
	var claims []campaign.Claim
	steps := []struct {
		name string
		run  func() error
	}{
		{"a claim", func() error {
			cl, err := claim(t, st, c.ID, "r", t0)
			claims = append(claims, cl)
			return err
		}},
		{"a heartbeat", func() error { return st.Heartbeat(t.Context(), "r", t0) }},
		{"a read", func() error { _, err := st.Campaign(t.Context(), c.ID); return err }},
		{"a start", func() error { _, err := st.Start(t.Context(), "r", claims, t0); return err }},
		{"an outcome", func() error {
			return record(t, st, claims[0], "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.sessions"}, t0)
		}},
		{"another claim", func() error { _, err := claim(t, st, c.ID, "r", t0); return err }},
	}
	for _, step := range steps {
		// Every session the handle holds ends before each step.
		if err := s.h.EndSessions(t.Context(), st); err != nil {
			t.Fatalf("end the sessions: %v", err)
		}
		if err := step.run(); err != nil {
			t.Fatalf("%s after the server ended the sessions: %v", step.name, err)
		}
	}
	if got := readMessage(t, st, claims[0].Message.ID).state; got != "sent" {
		t.Errorf("the row recorded sent is %s", got)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sending'`); n != 1 {
		t.Errorf("%d rows sending, want the one claimed last", n)
	}
}
