package e2e

import (
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/testproc"
)

// TestTwoHostsOneFileMessageEachOnce: two hosts, each its own database,
// run the same file without --shard, sharing limits through one Redis. By
// the server's record every recipient got the message once; each host's
// rows the other sent are failed with the reason (code -2), and between
// them the two hosts sent every row exactly once.
func TestTwoHostsOneFileMessageEachOnce(t *testing.T) {
	const rows = 40
	r := redistest.Start(t)
	hosts := newHosts(t, 2, r.URL(), 20, 5, 1000)
	list := hosts[0].WriteCSV("list.csv", 4915112410000, rows)
	hosts[0].OK("quota", "reset", "--force")

	var procs []*testproc.Proc
	for _, h := range hosts {
		procs = append(procs, h.Start("campaign", "run", list, "--template", "spring_sale", "--lang", "en_US", "--params", "name"))
	}
	for i, p := range procs {
		if res := p.Wait(t); res.Code != 0 {
			t.Errorf("host %d: want exit 0\n%s", i+1, res)
		}
	}
	recs := hosts[0].api.Records()
	checkNoDuplicates(t, recs)
	if got := testproc.Accepted(recs); len(got) != rows {
		t.Errorf("the server accepted %d distinct recipients, want all %d", len(got), rows)
	}
	sentBy := map[string]int{}
	for i, h := range hosts {
		for _, row := range h.Rows() {
			switch {
			case row.State == "sent":
				sentBy[row.Phone]++
			case row.State == "failed" && row.ErrorCode == -2 && strings.Contains(row.ErrorMessage, "another host"):
			default:
				t.Errorf("host %d: %s is %s (%d %q), want sent or skipped as sent by another host", i+1, row.Phone, row.State, row.ErrorCode, row.ErrorMessage)
			}
		}
	}
	if len(sentBy) != rows {
		t.Errorf("the hosts sent to %d recipients between them, want %d", len(sentBy), rows)
	}
	for to, n := range sentBy {
		if n != 1 {
			t.Errorf("%s: sent by %d hosts", to, n)
		}
	}
}
