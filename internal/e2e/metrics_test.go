package e2e

import (
	"bufio"
	"database/sql"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestMetricsMatchDatabase scrapes --metrics-addr while a campaign runs (it
// stops at its daily caps and waits, so the process stays up) and checks
// the Prometheus figures against the database.
func TestMetricsMatchDatabase(t *testing.T) {
	w := newWorld(t, sandbox.Options{Faults: sandbox.Faults{Throttle: 0.15, Seed: 4}, PairInterval: -1})
	for _, tier := range []string{"new", "warm", "active"} {
		w.OK("tier", "set", tier, "--rate", "200", "--burst", "10", "--daily-cap", "30")
	}
	w.addAccounts(account{"one", "5001", "new"}, account{"two", "5002", "warm"})
	csv := w.WriteCSV("m.csv", 4915120000000, 100)
	addr := freeAddr(t)
	p := w.Start("campaign", "run", csv, "--template", "t", "--lang", "en_US", "--params", "name",
		"--cooldown", "50ms", "--metrics-addr", addr)
	w.WaitFor(30*time.Second, "both accounts at their caps", func() bool {
		c := w.campaigns()
		return len(c) == 1 && c[0].Sent == 60 && c[0].Sending == 0
	})

	m := scrape(t, "http://"+addr+"/metrics")
	var sentDB, throttledDB int
	w.Query(`SELECT count(*) FROM messages WHERE state = 'sent'`, func(rs *sql.Rows) error { return rs.Scan(&sentDB) })
	w.Query(`SELECT count(*) FROM attempts WHERE class = 'throttled'`, func(rs *sql.Rows) error { return rs.Scan(&throttledDB) })
	if got := m.sum("wasend_sends_total", `class="ok"`); int(got) != sentDB {
		t.Errorf("wasend_sends_total{class=ok} = %v, database has %d sent", got, sentDB)
	}
	if throttledDB == 0 {
		t.Error("no request was throttled: the throttle counter is untested")
	}
	if got := m.sum("wasend_throttles_total", ""); int(got) != throttledDB {
		t.Errorf("wasend_throttles_total = %v, database has %d throttled attempts", got, throttledDB)
	}
	for _, acct := range []string{"one", "two"} {
		if got := m.sum("wasend_daily_used", `account="`+acct+`"`); got != 30 {
			t.Errorf("wasend_daily_used{account=%s} = %v, want its cap 30", acct, got)
		}
	}
	if got := m.sum("wasend_queue_depth", `state="pending"`); got != 40 {
		t.Errorf("wasend_queue_depth{state=pending} = %v, want 40", got)
	}
	if got := m.sum("wasend_request_duration_seconds_count", ""); got < float64(sentDB) {
		t.Errorf("request latency histogram counted %v requests, fewer than the %d sent", got, sentDB)
	}

	p.Signal(t, os.Interrupt)
	if r := p.Wait(t); r.Code != 130 {
		t.Errorf("run after SIGINT: %s", r)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// metricsText is a scraped Prometheus text exposition.
type metricsText []string

func scrape(t *testing.T, url string) metricsText {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	var lines metricsText
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// sum adds the samples of metric whose labels contain label ("" for all);
// NaN when a sample doesn't parse.
func (m metricsText) sum(metric, label string) float64 {
	var total float64
	for _, l := range m {
		f := strings.Fields(l)
		name, labels, _ := strings.Cut(f[0], "{")
		if name != metric || !strings.Contains(labels, label) {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return math.NaN()
		}
		total += v
	}
	return total
}
