package e2e

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/testproc"
)

// TestRedisLostDayRebuiltFromTheHosts: two hosts send, then Redis loses
// its data. The command wasend prints (`quota reset --force`), run on one
// host, rebuilds the day from that host's count and keeps the count in its
// database; the other host adds its own before it sends again. The caps
// left are the caps less what was sent (not whole caps again), and the
// command run a second time changes nothing.
func TestRedisLostDayRebuiltFromTheHosts(t *testing.T) {
	const dailyCap = 30
	r := redistest.Start(t)
	hosts := newHosts(t, 2, r.URL(), 20, 5, dailyCap)
	hosts[0].OK("quota", "reset", "--force")
	run := func(h *world, list string) {
		t.Helper()
		if res := h.Run("campaign", "run", list, "--template", "spring_sale", "--lang", "en_US", "--params", "name"); res.Code != 0 {
			t.Fatalf("campaign run: want exit 0\n%s", res)
		}
	}
	run(hosts[0], hosts[0].WriteCSV("one.csv", 4915112420000, 9))
	run(hosts[1], hosts[1].WriteCSV("two.csv", 4915112421000, 5))
	used := func() (total int) {
		t.Helper()
		var st struct {
			Portfolios []struct {
				Lost     bool `json:"lost"`
				Accounts []struct {
					Used int `json:"used"`
				} `json:"accounts"`
			} `json:"portfolios"`
		}
		if err := json.Unmarshal([]byte(hosts[0].OK("limits", "status", "--json").Stdout), &st); err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Portfolios {
			for _, a := range p.Accounts {
				total += a.Used
			}
		}
		return total
	}
	local := func(h *world) (n int) {
		h.Query(`SELECT sum(used_today) FROM accounts`, func(rs *sql.Rows) error { return rs.Scan(&n) })
		return n
	}
	if n := used(); n != 14 {
		t.Fatalf("Redis counts %d before the loss, want 14", n)
	}

	r.Client(t).FlushAll(t.Context())
	res := hosts[0].Run("limits", "status")
	if !strings.Contains(res.Stderr, "wasend quota reset --force") {
		t.Fatalf("limits status after the loss does not print the command:\n%s", res)
	}
	out := hosts[0].OK("quota", "reset", "--force").Stdout
	if !strings.Contains(out, "from this host's count") {
		t.Errorf("the recovery does not say it rebuilds from this host's count:\n%s", out)
	}
	if n := used(); n != 9 {
		t.Errorf("after the recovery on host 1 Redis counts %d, want host 1's 9", n)
	}
	if n := local(hosts[0]); n != 9 {
		t.Errorf("host 1's own count is %d after the recovery, want its 9 kept", n)
	}
	// Again: nothing added, nothing zeroed.
	if out := hosts[0].OK("quota", "reset", "--force").Stdout; !strings.Contains(out, "unchanged") {
		t.Errorf("the recovery run again does not say it changed nothing:\n%s", out)
	}
	if n := used(); n != 9 {
		t.Errorf("after the recovery ran twice Redis counts %d, want 9", n)
	}
	// Host 2 adds its 5 before its next 3 go: 17 of the caps used.
	run(hosts[1], hosts[1].WriteCSV("three.csv", 4915112422000, 3))
	if n := used(); n != 17 {
		t.Errorf("after host 2 sent again Redis counts %d, want 9 + 5 + 3", n)
	}
	if n := local(hosts[1]); n != 8 {
		t.Errorf("host 2's own count is %d, want 8", n)
	}
	recs := hosts[0].api.Records()
	checkNoDuplicates(t, recs)
	if got := testproc.Accepted(recs); len(got) != 17 {
		t.Errorf("the server accepted %d, want 17", len(got))
	}
}
