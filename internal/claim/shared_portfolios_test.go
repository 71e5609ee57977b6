package claim

import (
	"errors"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
)

// twoPortfolios is one host whose account a sends from portfolio "p1" and
// b from "p2", both started in Redis; lose removes a portfolio's state as
// a Redis restarted without persistence does.
func twoPortfolios(t *testing.T, r *redistest.Server) (sharedHost, func(p string)) {
	t.Helper()
	r.Client(t).FlushAll(t.Context())
	h := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(0.001, 50, 100), "b": limited(0.001, 50, 100)}, 10)[0]
	for _, p := range []string{"p1", "p2"} {
		if _, err := h.st.AddPortfolio(t.Context(), campaign.Portfolio{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	for acct, p := range map[string]string{"a": "p1", "b": "p2"} {
		if _, err := h.st.UpdateAccount(t.Context(), acct, campaign.AccountChange{Portfolio: ptr(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sharedQuotaReset(t.Context(), h.st, h.pool, true); err != nil {
		t.Fatal(err)
	}
	lose := func(p string) {
		if err := r.Client(t).Del(t.Context(), "wasend:{p:"+p+"}:gen").Err(); err != nil {
			t.Fatal(err)
		}
	}
	return h, lose
}

func hostID(t *testing.T, st *store.Store) string {
	t.Helper()
	var id string
	if err := st.Reader().QueryRowContext(t.Context(), `SELECT value FROM settings WHERE key = 'limits_host'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A portfolio whose shared state is lost stops its own accounts only: the
// others keep sending, and the note says which portfolio and the exact
// command, without internal claim ids.
func TestSharedClaimsFailClosedPerPortfolio(t *testing.T) {
	r := redistest.Start(t)
	tests := []struct {
		name     string
		lost     []string
		wantSent map[string]int
		wantWait campaign.WaitReason // of the claim after the sends
		wantNote []string
	}{
		{
			name:     "p1 lost: b keeps sending, the note names p1 and a",
			lost:     []string{"p1"},
			wantSent: map[string]int{"b": 10},
			wantNote: []string{"portfolio p1", "`wasend quota reset --force --account a --limits URL`"},
		},
		{
			name:     "both lost: nothing is sent, the wait names both",
			lost:     []string{"p1", "p2"},
			wantSent: map[string]int{},
			wantWait: campaign.WaitLimitsLost,
			wantNote: []string{"portfolio p1", "--account a ", "portfolio p2", "--account b "},
		},
		{
			name:     "none lost: nothing noted",
			wantSent: map[string]int{"a": 5, "b": 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, lose := twoPortfolios(t, r)
			for _, p := range tt.lost {
				lose(p)
			}
			got := map[string]int{}
			var wait *campaign.WaitError
			for range 20 {
				cs, err := New(h.st).ClaimN(t.Context(), h.camp.ID, "r1", t0, 4)
				if errors.As(err, &wait) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					got[c.Account.Name]++
				}
			}
			for _, acct := range []string{"a", "b"} {
				if got[acct] != tt.wantSent[acct] {
					t.Errorf("%s sent %d, want %d (all: %v)", acct, got[acct], tt.wantSent[acct], got)
				}
			}
			if tt.wantWait != "" && (wait == nil || wait.Reason != tt.wantWait) {
				t.Errorf("wait %+v, want %s", wait, tt.wantWait)
			}
			w, err := readmodel.New(h.st).LimitsWait(t.Context(), h.camp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.wantNote) == 0 {
				if !w.Since.IsZero() {
					t.Errorf("noted %+v, want nothing", w)
				}
				return
			}
			if w.Reason != campaign.WaitLimitsLost {
				t.Errorf("noted reason %q, want %q", w.Reason, campaign.WaitLimitsLost)
			}
			for _, s := range tt.wantNote {
				if !strings.Contains(w.Error+" ", s) {
					t.Errorf("note %q does not say %q", w.Error, s)
				}
			}
			if id := hostID(t, h.st); strings.Contains(w.Error, id) || (wait != nil && strings.Contains(wait.Detail, id)) {
				t.Errorf("user-facing note carries a claim id (host %s): %q / %+v", id, w.Error, wait)
			}
			if wait != nil && wait.Reason == campaign.WaitLimitsLost && !strings.Contains(wait.Debug, "admit "+hostID(t, h.st)+":") {
				t.Errorf("debug text %q lost the claim ids", wait.Debug)
			}
			if wait != nil && wait.Reason == campaign.WaitLimitsLost && wait.Detail != w.Error {
				t.Errorf("progress detail %q, status note %q: want the same", wait.Detail, w.Error)
			}
		})
	}
}
