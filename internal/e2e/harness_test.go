package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestMain builds the wasend binary the tests run, and stops the postgres
// a test started.
func TestMain(m *testing.M) {
	code := testproc.Main(m)
	pgtest.Stop()
	os.Exit(code)
}

// tokenEnv names the variable the test accounts read their token from.
const tokenEnv = "WASEND_E2E_TOKEN"

// The harness's types under the names the tests use.
type (
	result = testproc.Result
	row    = testproc.Row
	claim  = sandbox.Record // a token taken, as the request would carry it; At is the claim's time
)

// world is one test's surroundings: a temporary directory, a database file
// in it, and a sandbox Cloud API that every wasend process sends to.
type world struct {
	*testproc.World
	api *sandbox.Server
}

func newWorld(t *testing.T, opts sandbox.Options) *world {
	t.Helper()
	api := sandbox.New(opts)
	ts := httptest.NewServer(api)
	t.Cleanup(ts.Close)
	return worldAt(t, api, ts.URL)
}

// worldAt is a world whose processes send to url, which api stands behind.
func worldAt(t *testing.T, api *sandbox.Server, url string) *world {
	t.Helper()
	return &world{World: testproc.New(t, testproc.Options{APIBase: url, TokenEnv: tokenEnv}), api: api}
}

// onPostgres moves w to a fresh Postgres database (pgtest; the test skips
// where there is none, as pgtest says) and returns its URL.
func (w *world) onPostgres() string {
	w.T.Helper()
	dsn := pgtest.Start(w.T).NewDB(w.T, "")
	w.UsePostgres(dsn)
	return dsn
}

// eachDriver runs test on a SQLite file and on a Postgres database.
func eachDriver(t *testing.T, test func(t *testing.T, pg bool)) {
	t.Run("sqlite", func(t *testing.T) { test(t, false) })
	t.Run("postgres", func(t *testing.T) { test(t, true) })
}

// account is a sending number for addAccounts.
type account struct {
	name, phoneNumberID, tier string
}

// addAccounts adds the accounts with their token in tokenEnv.
func (w *world) addAccounts(accts ...account) {
	w.T.Helper()
	for _, a := range accts {
		w.OK("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", a.tier, "--token-env", tokenEnv)
	}
}

// campaignJSON is the part of `campaign list --json` the tests read.
type campaignJSON struct {
	ID      int64  `json:"id"`
	State   string `json:"state"`
	Total   int    `json:"total"`
	Sent    int    `json:"sent"`
	Pending int    `json:"pending"`
	Sending int    `json:"sending"`
	Failed  int    `json:"failed"`
	Unknown int    `json:"unknown"`
	Skipped int    `json:"skipped"`
}

// campaigns returns `wasend campaign list --json`.
func (w *world) campaigns() []campaignJSON {
	w.T.Helper()
	r := w.OK("campaign", "list", "--json")
	var out []campaignJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		w.T.Fatalf("campaign list --json: %v\n%s", err, r.Stdout)
	}
	return out
}

// dispatchID is the callback data wasend sends with a row's requests.
func dispatchID(r row) string { return fmt.Sprintf("wasend:c%d:m%d", r.CampaignID, r.ID) }

// checkNoDuplicates fails for every recipient the server accepted twice.
func checkNoDuplicates(t *testing.T, recs []sandbox.Record) {
	t.Helper()
	for to, rs := range testproc.Accepted(recs) {
		if len(rs) > 1 {
			t.Errorf("recipient %s accepted %d times by the server, at %v and %v", to, len(rs), rs[0].At, rs[1].At)
		}
	}
}

// checkAgainstServer holds the database's story up against the server's
// once every process has ended: a sent row was accepted with the same wamid
// from the same number; a row the server never accepted is failed or
// unknown (or pending, when allowPending: a run stopped at the caps); a row
// it accepted that wasend does not know as sent is unknown. No row is
// left sending.
func checkAgainstServer(t *testing.T, rows []row, recs []sandbox.Record, allowPending bool) {
	t.Helper()
	acc := testproc.Accepted(recs)
	inDB := map[string]bool{}
	for _, r := range rows {
		inDB[r.Phone] = true
		got := acc[r.Phone]
		switch {
		case r.State == "sending" || r.State == "pending" && !allowPending:
			t.Errorf("%s: still %s after the last run", r.Phone, r.State)
		case r.State == "sent" && len(got) == 0:
			t.Errorf("%s: sent in wasend (wamid %s) but never accepted by the server", r.Phone, r.WAMID)
		case r.State == "sent" && got[0].WAMID != r.WAMID:
			t.Errorf("%s: wasend's wamid %s, the server's %s", r.Phone, r.WAMID, got[0].WAMID)
		case r.State == "sent" && got[0].PhoneNumberID != r.PhoneNumberID:
			t.Errorf("%s: wasend says sent from %s, the server got it from %s", r.Phone, r.PhoneNumberID, got[0].PhoneNumberID)
		case r.State != "sent" && len(got) > 0 && r.State != "unknown":
			t.Errorf("%s: accepted by the server (%s) but %s in wasend; it must be unknown", r.Phone, got[0].Outcome, r.State)
		}
	}
	for to := range acc {
		if !inDB[to] {
			t.Errorf("server accepted %s, which is in no campaign", to)
		}
	}
	if sent := testproc.States(rows)["sent"]; sent > len(acc) {
		t.Errorf("wasend counts %d sent, the server accepted only %d recipients", sent, len(acc))
	}
}

// checkRate fails when more than burst + rate·(t_j − t_i) + slack of the
// times fall in any window [t_i, t_j]. times must be sorted.
func checkRate(t *testing.T, what string, times []time.Time, rate float64, burst int, slack float64) {
	t.Helper()
	for i := range times {
		for j := i; j < len(times); j++ {
			n := float64(j - i + 1)
			allowed := float64(burst) + rate*times[j].Sub(times[i]).Seconds() + slack
			if n > allowed+1e-9 {
				t.Errorf("%s: %d requests in %v (from #%d at %s), at most %.2f allowed",
					what, j-i+1, times[j].Sub(times[i]), i, times[i].Format("15:04:05.000"), math.Floor(allowed))
				return
			}
		}
	}
}

// sortedTimes returns ts sorted.
func sortedTimes(ts []time.Time) []time.Time {
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// matchClaims pairs every request the server received with the claim that
// spent a token on it: the k-th request for a message with its k-th
// attempt. It fails for a request that no token paid for, or that came
// from another number than the one claimed, and returns the claim of each
// request and the claims that never reached the server.
func matchClaims(t *testing.T, recs []sandbox.Record, claims []claim) (of []claim, unsent []claim) {
	t.Helper()
	queue := map[string][]claim{}
	for _, c := range claims {
		queue[c.CallbackData] = append(queue[c.CallbackData], c)
	}
	of = make([]claim, len(recs))
	for i, r := range recs {
		q := queue[r.CallbackData]
		if len(q) == 0 {
			t.Errorf("request %d to %s (%s) at %s: no token was taken for it", i, r.To, r.CallbackData, r.At.Format("15:04:05.000"))
			continue
		}
		of[i], queue[r.CallbackData] = q[0], q[1:]
		if of[i].PhoneNumberID != r.PhoneNumberID {
			t.Errorf("request %d to %s: sent from %s, claimed on %s", i, r.To, r.PhoneNumberID, of[i].PhoneNumberID)
		}
		if r.At.Before(of[i].At) {
			t.Errorf("request %d to %s: reached the server at %s, before its claim at %s", i, r.To,
				r.At.Format("15:04:05.000000"), of[i].At.Format("15:04:05.000000"))
		}
	}
	for _, q := range queue {
		unsent = append(unsent, q...)
	}
	return of, unsent
}
