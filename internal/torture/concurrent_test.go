//go:build torture

package torture

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
)

// TestConcurrentProcesses runs four `campaign run` processes at once on one
// database and the same three accounts: two on the same file (the same
// command, so the same campaign) and two on campaigns of their own. The
// caps allow fewer sends than the files hold. Judged from the server's
// record: no bucket overdrawn by more than one token, no daily cap
// exceeded, nobody accepted twice, and no "database is locked" reaching
// the user.
func TestConcurrentProcesses(t *testing.T) {
	var (
		perFile  = size(100, 500)
		dailyCap = size(60, 300) // 3 accounts × cap < 3 files × perFile
		lim      = limit{rate: size(10.0, 20.0), burst: 5}
	)
	seed := testSeed(t)
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed))
	w.setup(lim.rate, lim.burst, dailyCap, threeAccounts)
	shared := w.WriteCSV("shared.csv", 4915112350000, perFile)
	files := []string{shared, shared,
		w.WriteCSV("other1.csv", 4915112360000, perFile),
		w.WriteCSV("other2.csv", 4915112370000, perFile),
	}

	start := time.Now()
	var procs []*testproc.Proc
	for _, f := range files {
		procs = append(procs, w.Start(runArgs(f, "--stop-when-capped")...))
	}
	exits := map[int]int{}
	finishedBy := map[string]bool{} // files whose process exited 0: done
	for i, p := range procs {
		r := p.Wait(t)
		exits[r.Code]++
		if r.Code == 0 {
			finishedBy[files[i]] = true
		}
		checkOutput(t, fmt.Sprintf("process %d (%s)", i+1, files[i]), r)
		if r.Code != 0 && r.Code != 3 {
			t.Errorf("process %d (%s): want exit 0 (finished) or 3 (capped)\n%s", i+1, files[i], r)
		}
	}
	elapsed := time.Since(start)
	if exits[3] == 0 {
		t.Errorf("no process stopped at the caps although they allow %d of %d sends", 3*dailyCap, 3*perFile)
	}

	recs := w.api.Records(t)
	rows := w.Rows()
	var campaigns int
	w.Query(`SELECT count(*) FROM campaigns`, func(rs *sql.Rows) error { return rs.Scan(&campaigns) })
	if campaigns != 3 || len(rows) != 3*perFile {
		t.Errorf("%d campaigns with %d rows, want 3 with %d: the two runs of %s must share one campaign",
			campaigns, len(rows), 3*perFile, shared)
	}
	for file := range finishedBy {
		var state string
		var open int
		w.Query(`SELECT c.state, (SELECT count(*) FROM messages m WHERE m.campaign_id = c.id AND m.state IN ('pending', 'sending'))
			FROM campaigns c WHERE c.source = ?`, func(rs *sql.Rows) error { return rs.Scan(&state, &open) }, file)
		if state != "finished" || open != 0 {
			t.Errorf("a process on %s exited 0 (done), but its campaign is %q with %d rows open", file, state, open)
		}
	}
	f := judge(t, rows, recs, true)
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	f.capBreaches = checkCaps(t, recs, dailyCap)

	// The processes really overlapped: campaigns had requests while
	// another's were under way. (Not every pair: with tight caps one
	// campaign may get all its tokens before another's process is up.)
	first, last := testproc.Spans(recs)
	overlapping := 0
	for c := range first {
		for d := range first {
			if c < d && first[c].Before(last[d]) && first[d].Before(last[c]) {
				overlapping++
			}
		}
	}
	if overlapping == 0 {
		t.Errorf("no two campaigns sent at the same time: the processes did not run concurrently (%v to %v)", first, last)
	}
	// used_today is wasend's view of the cap; it must match the server's.
	per := acceptedBy(recs)
	for _, a := range threeAccounts {
		var used int
		w.Query(`SELECT used_today FROM accounts WHERE phone_number_id = ?`, func(rs *sql.Rows) error { return rs.Scan(&used) }, a.phoneNumberID)
		if used != per[a.phoneNumberID] {
			t.Errorf("account %s: used_today %d, the server accepted %d", a.name, used, per[a.phoneNumberID])
		}
	}
	report(t, "concurrent", f, fmt.Sprintf("processes=4 exits=%v accepted_per_account=%v cap=%d elapsed=%v",
		exits, per, dailyCap, elapsed.Round(time.Millisecond)))
}
