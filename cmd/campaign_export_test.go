package cmd

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

var exportHeader = []string{"line", "input", "phone", "state", "account", "attempts", "wamid",
	"error_code", "error_message", "updated_at", "sent_at", "delivery", "delivered_at", "read_at",
	"replied_at", "reply", "opted_out_at", "pricing_category", "pricing_type", "cost", "wrote_at", "window"}

// parseExport reads export output back with encoding/csv, checks the
// header and returns the rows as column → value.
func parseExport(t *testing.T, out string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, out)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], exportHeader) {
		t.Fatalf("export header = %q, want %q", recs, exportHeader)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range exportHeader {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func TestCampaignExport(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	out, errOut, err := c.run("campaign", "export", "1")
	if err != nil || errOut != "" {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	rows := parseExport(t, out)
	if len(rows) != 11 {
		t.Fatalf("%d rows, want 11", len(rows))
	}
	states := map[string]int{}
	for i, r := range rows {
		if r["line"] != fmt.Sprint(i+2) {
			t.Errorf("row %d: line %s, want file order", i, r["line"])
		}
		if !strings.HasPrefix(r["phone"], "+49151") {
			t.Errorf("line %s: phone %q is not E.164", r["line"], r["phone"])
		}
		for _, col := range []string{"updated_at", "sent_at"} {
			if v := r[col]; v != "" {
				if ts, err := time.Parse(time.RFC3339, v); err != nil || !strings.HasSuffix(v, "Z") || ts.Before(showT0) {
					t.Errorf("line %s: %s %q is not an RFC 3339 UTC time after the import (%v)", r["line"], col, v, err)
				}
			}
		}
		states[r["state"]]++
	}
	if want := map[string]int{"sent": 4, "failed": 4, "unknown": 1, "sending": 1, "pending": 1}; !maps.Equal(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	check := func(line int, want map[string]string) {
		t.Helper()
		r := rows[line-2]
		for k, v := range want {
			if r[k] != v {
				t.Errorf("line %d: %s = %q, want %q", line, k, r[k], v)
			}
		}
	}
	check(2, map[string]string{"input": "0151 00000000", "phone": "+4915100000000", "state": "sent", "attempts": "1",
		"wamid": "wamid.HBgL02", "error_code": "", "error_message": "",
		"updated_at": "2026-11-30T14:01:00Z", "sent_at": "2026-11-30T14:01:00Z"})
	check(5, map[string]string{"state": "failed", "error_code": "131026", "wamid": "", "sent_at": "",
		"error_message": "131026 Message undeliverable: receiver of line 5 is not on WhatsApp"})
	check(8, map[string]string{"state": "sent", "attempts": "3", "error_code": "", "updated_at": "2026-11-30T14:01:08Z"})
	check(12, map[string]string{"state": "pending", "account": "", "attempts": "0", "updated_at": "", "sent_at": ""})
	if rows[0]["account"] == "" || rows[9]["account"] == "" {
		t.Errorf("sent and failed rows name their account: %v %v", rows[0], rows[9])
	}

	// --state keeps one state; a state without rows gives the header alone.
	failed := parseExport(t, c.ok("campaign", "export", "1", "--state", "failed"))
	var lines []string
	for _, r := range failed {
		if r["state"] != "failed" {
			t.Errorf("--state failed exported a %s row", r["state"])
		}
		lines = append(lines, r["line"])
	}
	if want := []string{"5", "6", "7", "10"}; !slices.Equal(lines, want) {
		t.Errorf("--state failed: lines %v, want %v", lines, want)
	}
	if got := c.ok("campaign", "export", "1", "--state", "unknown"); len(parseExport(t, got)) != 1 {
		t.Errorf("--state unknown:\n%s", got)
	}
	c.ok("campaign", "retry", "1", "--unknown")
	if got := c.ok("campaign", "export", "1", "--state", "unknown"); len(parseExport(t, got)) != 0 {
		t.Errorf("--state unknown after a retry:\n%s", got)
	}
}

func TestCampaignExportOut(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	dir := t.TempDir()
	path := filepath.Join(dir, "export.csv")
	// An existing file is replaced whole, and private afterwards.
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, err := c.run("campaign", "export", "1", "--out", path)
	if err != nil {
		t.Fatalf("export --out: %v\n%s", err, errOut)
	}
	if stdout != "" {
		t.Errorf("export --out wrote to stdout: %q", stdout)
	}
	if !strings.Contains(errOut, "wrote 11 row(s) to "+path) {
		t.Errorf("stderr %q does not say what was written", errOut)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s: mode %o, want 600", path, perm)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.ok("campaign", "export", "1"); string(got) != want {
		t.Errorf("--out file differs from stdout:\n%s\n--\n%s", got, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left in %s: %v", dir, ents)
	}

	// A failed export leaves neither the file nor a temporary one.
	missing := filepath.Join(dir, "missing.csv")
	if _, _, err := c.run("campaign", "export", "9", "--out", missing); err == nil {
		t.Error("export of campaign 9 succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in %s after a failed export: %v", dir, ents)
	}
}

func TestCampaignExportUsage(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	if msg := c.usage("campaign", "export", "1", "--state", "done"); !strings.Contains(msg, "pending, sending, sent, failed, unknown") {
		t.Errorf("bad --state: %q", msg)
	}
	c.usage("campaign", "export", "0")
	c.usage("campaign", "export")
	c.usage("campaign", "export", "1", "--nope")
}

// TestExportStopsOnWriteError: a writer that fails (a full disk, a closed
// pipe) ends the export with its error, and the reading goroutine exits.
func TestExportStopsOnWriteError(t *testing.T) {
	db := filepath.Join(t.TempDir(), "wasend.db")
	seedCampaign(t, db)
	st, err := store.Open(t.Context(), db, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := writeExport(t.Context(), failWriter{}, st, 1, "", time.Now()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("export to a failing writer: %v, want disk full", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// BenchmarkExport measures campaign export of 100k rows, database to CSV.
func BenchmarkExport(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "wasend.db"), driver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	im, err := st.Import(ctx, campaign.Campaign{Name: "bench", Fingerprint: "bench", Source: "bench.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US", Params: []string{"name"}}})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		p := fmt.Sprintf("+4915%09d", i)
		if _, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: p, Phone: p, Params: []string{"x"}}); err != nil {
			b.Fatal(err)
		}
	}
	c, err := im.Commit(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rows, err := writeExport(ctx, io.Discard, st, c.ID, "", time.Now())
		if err != nil || rows != n {
			b.Fatalf("%d rows, %v", rows, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
