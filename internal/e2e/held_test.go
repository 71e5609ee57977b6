package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestHeldSendsStopAndSettle: the sandbox answers every template send
// held_for_quality_assessment (template pacing) and releases each by status
// webhooks a second later. The run stops adding sends while --max-held of
// them are held, says so, and goes on as statuses settle them; in the end
// every row is sent and delivered, nothing stays held, and status --json
// says no send is held.
func TestHeldSendsStopAndSettle(t *testing.T) {
	eachDriver(t, func(t *testing.T, pg bool) { testHeld(t, pg, 16, 0) })
}

// TestHeldSendsDropped: Meta drops held sends when early feedback on the
// template is bad, and pauses the template (132015): as after any 132015
// status, each dropped row goes back to pending with the code (it never
// reached the person; it goes once the template is fixed and the campaign
// resumed) and the campaign pauses; nothing stays held.
func TestHeldSendsDropped(t *testing.T) {
	eachDriver(t, func(t *testing.T, pg bool) { testHeld(t, pg, 8, 1) })
}

func testHeld(t *testing.T, pg bool, rows int, drop float64) {
	const (
		maxHeld = 4
		heldFor = time.Second
	)
	addr := freeAddr(t)
	w := newWorld(t, sandbox.Options{Throughput: -1, PairInterval: -1,
		Faults:   sandbox.Faults{Seed: 3, Held: 1, HeldDrop: drop, HeldFor: heldFor},
		Webhooks: sandbox.WebhookOptions{URL: "http://" + addr + "/webhook", AppSecret: []byte(e2eSecret), Seed: 7}})
	if pg {
		w.onPostgres()
	}
	w.addAccounts(account{"main", "106540352242922", "active"})
	w.fastTiers("500", "50")
	recv := w.startReceiver(addr)
	csv := w.WriteCSV("list.csv", 4915100000000, rows)

	run := w.Run("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name",
		"--workers", "2", "--max-held", fmt.Sprint(maxHeld))
	switch {
	case drop == 0 && run.Code != 0:
		t.Fatalf("campaign run: %s", run)
	case drop > 0 && (run.Code != 4 || !strings.Contains(run.Stderr, "132015")):
		t.Fatalf("campaign run: want it paused (exit 4) by 132015\n%s", run)
	}
	if !strings.Contains(run.Stderr, "template pacing") {
		t.Errorf("the run never said it stopped for held sends:\n%s", run.Stderr)
	}
	if failed := w.api.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d webhook posts not answered 200", failed)
	}
	recv.Signal(t, syscall.SIGTERM) // it applies what it stored, then exits
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	}

	// A send is held from its request until its statuses come, at least
	// heldFor: no more than --max-held (and the claims in flight when the
	// count reached it) may have been asked within any heldFor.
	var at []time.Time
	for _, rec := range w.api.Records() {
		if !rec.Held {
			t.Errorf("request %s answered %s, not held", rec.WAMID, rec.Outcome)
		}
		at = append(at, rec.At)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	if drop == 0 && len(at) != rows || drop > 0 && (len(at) < maxHeld || len(at) == rows) {
		t.Fatalf("%d requests of %d rows (drop %v)", len(at), rows, drop)
	}
	const slack = 4 // a claim's batch taken while the count was below --max-held
	for i := range at {
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < heldFor; j++ {
			n++
		}
		if n > maxHeld+slack {
			t.Fatalf("%d sends within %v from %s: the campaign did not stop at --max-held %d", n, heldFor, at[i].Format(time.StampMilli), maxHeld)
		}
	}

	type settled struct {
		state, wamid, delivery string
		code                   int
	}
	byID := map[int64]settled{}
	w.Query(`SELECT id, state, coalesce(wamid, ''), coalesce(delivery, ''), coalesce(error_code, 0) FROM messages`,
		func(rs *sql.Rows) error {
			var s settled
			var id int64
			err := rs.Scan(&id, &s.state, &s.wamid, &s.delivery, &s.code)
			byID[id] = s
			return err
		})
	var released, dropped int
	for wamid, d := range w.api.Deliveries() {
		var cid, mid int64
		if _, err := fmt.Sscanf(d.CallbackData, "wasend:c%d:m%d", &cid, &mid); err != nil {
			t.Fatalf("callback data %q: %v", d.CallbackData, err)
		}
		got := byID[mid]
		switch {
		case !d.Held:
			t.Errorf("%s: the sandbox did not hold it", wamid)
		case d.Final == "failed":
			dropped++
			if got.state != "pending" || got.code != sandbox.HeldDropCode || got.wamid != "" {
				t.Errorf("row %d dropped: %+v, want pending with %d", mid, got, sandbox.HeldDropCode)
			}
		default:
			released++
			if got.state != "sent" || got.wamid != wamid || got.delivery != d.Final {
				t.Errorf("row %d released: %+v, want sent, %s", mid, got, d.Final)
			}
		}
	}
	if drop == 0 && (released != rows || dropped != 0) || drop > 0 && (released != 0 || dropped != len(at)) {
		t.Errorf("%d released, %d dropped of %d requests (drop %v)", released, dropped, len(at), drop)
	}

	var status struct {
		Campaigns []struct {
			State               string
			Sent, Pending, Held int
			HeldStop            bool `json:"held_stop"`
		} `json:"campaigns"`
	}
	st := w.OK("status", "--json")
	if err := json.Unmarshal([]byte(st.Stdout), &status); err != nil || len(status.Campaigns) != 1 {
		t.Fatalf("status --json: %v\n%s", err, st.Stdout)
	}
	wantState := "finished"
	if drop > 0 {
		wantState = "paused"
	}
	if c := status.Campaigns[0]; c.Held != 0 || c.HeldStop || c.Sent != released || c.Pending != rows-released || c.State != wantState {
		t.Errorf("status --json: %+v; want %s, %d sent, %d pending, none held", c, wantState, released, rows-released)
	}
}
