package e2e

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/statesql"
)

// TestInFlightRowsNamedByTheirCampaign kills a run of campaign 1 while its
// requests hang at the API, then runs campaign 2: the rows campaign 1 left
// in flight become unknown and are reported as campaign 1's, with the
// command that resends them — which does — and nothing of campaign 2's.
func TestInFlightRowsNamedByTheirCampaign(t *testing.T) {
	api := sandbox.New(sandbox.Options{PairInterval: -1})
	var hang atomic.Bool
	hang.Store(true)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if hang.Load() && strings.HasSuffix(r.URL.Path, "/messages") {
			select { // in flight until the caller dies, or the test ends
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		api.ServeHTTP(rw, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // first: Close waits for the handlers
	w := worldAt(t, api, ts.URL)
	w.OK("tier", "set", "active", "--rate", "100", "--burst", "10")
	w.addAccounts(account{"main", "100000000000003", "active"})
	run := func(csv string) []string {
		return []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	}

	first := w.WriteCSV("first.csv", 4915112340000, 5)
	p := w.Start(run(first)...)
	// In flight: the rows whose requests started. A row claimed and not
	// yet started goes back to pending: nothing of it reached the API.
	started := func() (n int) {
		w.Query(`SELECT count(*) FROM messages WHERE state = 'sending' AND `+statesql.Started("messages", true), func(rs *sql.Rows) error { return rs.Scan(&n) })
		return n
	}
	w.WaitFor(20*time.Second, "campaign 1's requests in flight", func() bool { return started() > 0 })
	p.Signal(t, syscall.SIGKILL)
	if r := p.Wait(t); r.Signal != syscall.SIGKILL {
		t.Fatalf("campaign 1's run ended before the kill: %s", r)
	}
	inFlight := started()
	hang.Store(false)
	// Its heartbeat stopped a minute ago: the run is dead to any process
	// now, as it would be after waiting that long.
	db, err := sql.Open("sqlite3", "file:"+w.DB+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runners SET heartbeat_at = heartbeat_at - ?`, time.Minute.Nanoseconds()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	second := w.WriteCSV("second.csv", 4915112350000, 3)
	r := w.OK(run(second)...)
	if !strings.Contains(r.Stderr, fmt.Sprintf("%d message(s) of campaign 1 were in flight", inFlight)) ||
		!strings.Contains(r.Stderr, "wasend campaign retry 1 --unknown") {
		t.Errorf("campaign 2's run does not name campaign 1's rows in flight and their command\n%s", r.Stderr)
	}
	if strings.Contains(r.Stderr, "retry 2 --unknown") {
		t.Errorf("campaign 2's run points at campaign 2 for campaign 1's rows\n%s", r.Stderr)
	}
	byCampaign := map[int64]map[string]int{}
	for _, row := range w.Rows() {
		if byCampaign[row.CampaignID] == nil {
			byCampaign[row.CampaignID] = map[string]int{}
		}
		byCampaign[row.CampaignID][row.State]++
	}
	if got := byCampaign[1]; got["unknown"] != inFlight || got["sending"] != 0 {
		t.Errorf("campaign 1's rows %v, want the %d in flight unknown", got, inFlight)
	}
	if got := byCampaign[2]; got["sent"] != 3 {
		t.Errorf("campaign 2's rows %v, want 3 sent", got)
	}

	// The command named resends them.
	w.OK("campaign", "retry", "1", "--unknown")
	w.OK("campaign", "run", "--resume", "1")
	for _, row := range w.Rows() {
		if row.CampaignID == 1 && row.State != "sent" {
			t.Errorf("campaign 1's row %d is %s after retry --unknown and a run", row.ID, row.State)
		}
	}
}
