package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// swapWorld is a world whose sandbox can be replaced while the URL stays
// the same, as if the Cloud API were restarted with other faults.
type swapWorld struct {
	*world
	cur atomic.Pointer[sandbox.Server]
}

func newSwapWorld(t *testing.T, opts sandbox.Options) *swapWorld {
	t.Helper()
	sw := &swapWorld{}
	api := sandbox.New(opts)
	sw.cur.Store(api)
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw.cur.Load().ServeHTTP(rw, r)
	}))
	t.Cleanup(ts.Close)
	sw.world = worldAt(t, api, ts.URL)
	return sw
}

// swap puts a fresh sandbox behind the URL; w.api becomes it.
func (sw *swapWorld) swap(opts sandbox.Options) {
	api := sandbox.New(opts)
	sw.cur.Store(api)
	sw.api = api
}

// fastTiers makes every tier fast enough for a test of a few seconds.
func (w *world) fastTiers(rate, burst string) {
	w.T.Helper()
	for _, tier := range []string{"new", "warm", "active"} {
		w.OK("tier", "set", tier, "--rate", rate, "--burst", burst, "--daily-cap", "100000")
	}
}

// statusCampaign is the part of a campaign in `status --json` these tests read.
type statusCampaign struct {
	ID              int64   `json:"id"`
	State           string  `json:"state"`
	PauseReason     string  `json:"pause_reason"`
	Total           int     `json:"total"`
	Sent            int     `json:"sent"`
	Pending         int     `json:"pending"`
	Sending         int     `json:"sending"`
	Failed          int     `json:"failed"`
	Unknown         int     `json:"unknown"`
	Skipped         int     `json:"skipped"`
	ThrottleRate    float64 `json:"throttle_rate"`
	AvgAttempts     float64 `json:"avg_attempts"`
	DroppedAccounts []struct {
		Account   string    `json:"account"`
		Reason    string    `json:"reason"`
		ErrorCode int       `json:"error_code"`
		At        time.Time `json:"at"`
	} `json:"dropped_accounts"`
}

// status returns the campaigns of `wasend status --json`.
func (w *world) status() []statusCampaign {
	w.T.Helper()
	r := w.OK("status", "--json")
	var out struct {
		Campaigns []statusCampaign `json:"campaigns"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		w.T.Fatalf("status --json: %v\n%s", err, r.Stdout)
	}
	return out.Campaigns
}

// droppedNames returns the names of the accounts dropped from c.
func droppedNames(c statusCampaign) map[string]bool {
	out := map[string]bool{}
	for _, d := range c.DroppedAccounts {
		out[d.Account] = true
	}
	return out
}

// failedRow is one entry of `campaign failed ID --json`.
type failedRow struct {
	Line        int       `json:"line"`
	Phone       string    `json:"phone"`
	ErrorCode   int       `json:"error_code"`
	Reason      string    `json:"reason"`
	Attempts    int       `json:"attempts"`
	Account     string    `json:"account"`
	LastAttempt time.Time `json:"last_attempt"`
	GaveUp      bool      `json:"gave_up"`
}

// failed returns `wasend campaign failed ID --json`.
func (w *world) failed(id string) []failedRow {
	w.T.Helper()
	r := w.OK("campaign", "failed", id, "--json")
	var out []failedRow
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		w.T.Fatalf("campaign failed %s --json: %v\n%s", id, err, r.Stdout)
	}
	return out
}
