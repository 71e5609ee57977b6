package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// cli runs wasend commands in-process against one database file, each
// with a fresh Factory built by hand: map-backed environment, fixed clock,
// test streams.
type cli struct {
	t   *testing.T
	db  string
	env map[string]string
	now time.Time
	tty bool
	// width of the terminal in columns; 0 for unlimited.
	width int
	// stdin is what a person types; stdinTTY whether stdin is a terminal.
	stdin    string
	stdinTTY bool
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	return &cli{
		t:   t,
		db:  filepath.Join(t.TempDir(), "wasend.db"),
		env: map[string]string{"WASEND_TZ": "UTC"},
		now: time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC),
	}
}

// emptyDB creates c's database, empty: the state a first setup command
// leaves (commands that only read fail where there is none).
func (c *cli) emptyDB() {
	c.t.Helper()
	st, err := store.Open(c.t.Context(), c.db, driver.Options{Location: time.UTC})
	if err != nil {
		c.t.Fatal(err)
	}
	st.Close()
}

// run executes wasend --db DB args… and returns its streams and error.
func (c *cli) run(args ...string) (stdout, stderr string, err error) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	now := c.now
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(c.env), Now: func() time.Time { return now }}
	f.IO.SetTTY(c.tty, c.tty)
	if c.width > 0 {
		f.IO.SetWidth(c.width)
	}
	f.IO.SetStdinTTY(c.stdinTTY)
	f.IO.In = strings.NewReader(c.stdin)
	root := NewRootCmd(f)
	root.SetArgs(append([]string{"--db", c.db}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("wasend %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// usage runs a command that must fail with a usage error (exit 2) and
// returns the error's message.
func (c *cli) usage(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run(args...)
	var ue usageError
	if !errors.As(err, &ue) {
		c.t.Fatalf("wasend %s: error %v, want a usage error\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	var msg bytes.Buffer
	if code := exitCode(err, &msg); code != ExitUsage {
		c.t.Errorf("wasend %s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
	}
	return err.Error()
}

// status returns `wasend status --json` decoded.
func (c *cli) status() report.Status {
	c.t.Helper()
	out := c.ok("status", "--json")
	var s report.Status
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		c.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return s
}

func (c *cli) addAccounts() {
	c.t.Helper()
	c.ok("account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "active", "--token-env", "WA_TOKEN_MAIN")
	c.ok("account", "add", "fresh-02", "--phone-number-id", "2345678901", "--tier", "new", "--token-env", "WA_TOKEN_FRESH")
}

// table runs a listing command on a TTY and piped. It checks the two forms
// against each other — a header whose columns every row is aligned under on
// the TTY; the same cells tab-separated without a header when piped — and
// returns the rows as header → cell, so tests do not depend on the column
// order or on columns added later.
func (c *cli) table(args ...string) []map[string]string {
	c.t.Helper()
	tty := c.tty
	defer func() { c.tty = tty }()
	c.tty = true
	aligned := strings.Split(strings.TrimSuffix(c.ok(args...), "\n"), "\n")
	c.tty = false
	piped := strings.Split(strings.TrimSuffix(c.ok(args...), "\n"), "\n")
	if piped[0] == "" {
		piped = nil
	}

	header := aligned[0]
	// Columns start after a run of two or more spaces ("PHONE NUMBER ID"
	// is one column).
	var names []string
	var starts []int
	for i := 0; i < len(header); {
		j := strings.Index(header[i:], "  ")
		if j < 0 {
			j = len(header) - i
		}
		names = append(names, header[i:i+j])
		starts = append(starts, i)
		i += j
		for i < len(header) && header[i] == ' ' {
			i++
		}
	}
	if len(aligned)-1 != len(piped) {
		c.t.Fatalf("wasend %s: %d rows on a TTY, %d piped\n%s\n--\n%s", strings.Join(args, " "),
			len(aligned)-1, len(piped), strings.Join(aligned, "\n"), strings.Join(piped, "\n"))
	}
	var out []map[string]string
	for r, line := range piped {
		cells := strings.Split(line, "\t")
		if len(cells) != len(names) {
			c.t.Fatalf("wasend %s: piped row %q has %d cells, the header %d columns %q", strings.Join(args, " "), line, len(cells), len(names), names)
		}
		row := map[string]string{}
		tline := aligned[r+1]
		for i, name := range names {
			row[name] = cells[i]
			// On the TTY the same cell starts under its header.
			end := len(tline)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(tline))
			}
			got := ""
			if starts[i] <= len(tline) {
				got = strings.TrimRight(tline[starts[i]:end], " ")
			}
			if got != cells[i] || starts[i] > 0 && starts[i] <= len(tline) && tline[starts[i]-1] != ' ' {
				c.t.Errorf("wasend %s: TTY row %d column %s is %q at offset %d, piped %q\n%s\n%s",
					strings.Join(args, " "), r+1, name, got, starts[i], cells[i], header, tline)
			}
		}
		out = append(out, row)
	}
	return out
}

// checkRows compares rows with want, column by named column.
func checkRows(t *testing.T, what string, rows []map[string]string, want []map[string]string) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%s: %d rows, want %d: %v", what, len(rows), len(want), rows)
	}
	for i := range want {
		for col, w := range want[i] {
			got, ok := rows[i][col]
			if !ok {
				t.Errorf("%s: no column %s (columns %v)", what, col, rows[i])
			} else if got != w {
				t.Errorf("%s: row %d %s = %q, want %q", what, i+1, col, got, w)
			}
		}
	}
}

func TestAccountAddList(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	checkRows(t, "account list", c.table("account", "list"), []map[string]string{
		{"NAME": "main-01", "TIER": "active", "RATE": "1 every 5 s", "BURST": "15", "TOKENS": "15.0", "TODAY": "0/300",
			"STATE": "ok", "PHONE NUMBER ID": "1234567890", "TOKEN ENV": "$WA_TOKEN_MAIN"},
		{"NAME": "fresh-02", "TIER": "new", "RATE": "1 every 12 s", "BURST": "5", "TOKENS": "5.0", "TODAY": "0/50",
			"STATE": "ok", "PHONE NUMBER ID": "2345678901", "TOKEN ENV": "$WA_TOKEN_FRESH"},
	})

	// Exact forms of the first columns: the header and alignment on a TTY,
	// tabs and no header when piped.
	c.tty = true
	tty := c.ok("account", "list")
	if !strings.HasPrefix(tty, "NAME      TIER    RATE          ") || !strings.Contains(tty, "\nmain-01   active  1 every 5 s   ") ||
		!strings.Contains(tty, "\nfresh-02  new     1 every 12 s  ") || strings.Contains(tty, "\t") {
		t.Errorf("account list on a TTY:\n%s", tty)
	}
	c.tty = false
	piped := c.ok("account", "list")
	if !strings.HasPrefix(piped, "main-01\tactive\t1 every 5 s\t") || !strings.Contains(piped, "\nfresh-02\tnew\t1 every 12 s\t") ||
		strings.Contains(piped, "NAME") || strings.Count(piped, "\n") != 2 {
		t.Errorf("account list piped:\n%q", piped)
	}
}

func TestAccountAddChatterOnStderr(t *testing.T) {
	c := newCLI(t)
	out, errOut, err := c.run("account", "add", "main-01", "--phone-number-id", "1234567890", "--token-env", "WA_TOKEN_MAIN")
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing: chatter belongs on stderr", out)
	}
	if want := "added account main-01 (tier new, token from $WA_TOKEN_MAIN)\n"; errOut != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
	out, errOut, err = c.run("-q", "account", "add", "other", "--phone-number-id", "99")
	if err != nil || out != "" || errOut != "" {
		t.Errorf("-q account add: %v, stdout %q, stderr %q; want no output", err, out, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantMsg string
	}{
		{"account add: bad tier", []string{"account", "add", "x", "--phone-number-id", "1", "--tier", "gold"}, `--tier "gold"`},
		{"account add: no phone number id", []string{"account", "add", "x"}, "--phone-number-id"},
		{"account add: no name", []string{"account", "add", "--phone-number-id", "1"}, "arg"},
		{"account set: --rate and --every", []string{"account", "set", "main-01", "--rate", "1", "--every", "2s"}, "--rate and --every"},
		{"account set: --disable and --enable", []string{"account", "set", "main-01", "--disable", "--enable"}, "exclude"},
		{"account set: bad tier", []string{"account", "set", "main-01", "--tier", "gold"}, `--tier "gold"`},
		{"account set: zero burst", []string{"account", "set", "main-01", "--burst", "0"}, "--burst 0"},
		{"account set: negative rate", []string{"account", "set", "main-01", "--rate", "-1"}, "--rate -1"},
		{"tier set: unknown tier", []string{"tier", "set", "gold", "--rate", "1"}, `tier "gold"`},
		{"tier set: --rate and --every", []string{"tier", "set", "new", "--rate", "1", "--every", "1s"}, "--rate and --every"},
		{"limit global: --off with --rate", []string{"limit", "global", "--off", "--rate", "1"}, "--off excludes"},
		{"unknown flag", []string{"status", "--bogus"}, "bogus"},
		{"campaign run: no message", []string{"campaign", "run", "x.csv"}, "--template"},
		{"campaign run: template without lang", []string{"campaign", "run", "x.csv", "--template", "t"}, "--lang"},
		{"campaign run: text and template", []string{"campaign", "run", "x.csv", "--text", "hi", "--ignore-window", "--template", "t"}, "--text excludes"},
		{"campaign run: no file", []string{"campaign", "run", "--template", "t", "--lang", "en"}, "arg"},
		{"campaign retry: no state", []string{"campaign", "retry", "1"}, "--unknown"},
		{"campaign retry: bad id", []string{"campaign", "retry", "x", "--unknown"}, `campaign ID "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.addAccounts()
			if msg := c.usage(tt.args...); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("error %q does not mention %q", msg, tt.wantMsg)
			}
		})
	}
}

// TestBadCommandLineExitsTwo holds the README's promise "2: bad command
// line" for mistakes Cobra itself catches: unknown commands, stray
// arguments of commands built with cobra.NoArgs, and sandbox serve's flag
// values. Each case names the exit code it gets today.
func TestBadCommandLineExitsTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown command (exit 1 today)", []string{"bogus"}},
		{"unknown subcommand of a group (exit 0 today)", []string{"account", "bogus"}},
		{"version with an argument (exit 1 today)", []string{"version", "x"}},
		{"sandbox serve with an argument (exit 1 today)", []string{"sandbox", "serve", "x"}},
		{"sandbox serve --throttle 2 (exit 1 today)", []string{"sandbox", "serve", "--throttle", "2"}},
		{"sandbox serve --fail-number abc (exit 1 today)", []string{"sandbox", "serve", "--fail-number", "abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			_, _, err := c.run(tt.args...)
			var stderr bytes.Buffer
			if code := exitCode(err, &stderr); code != ExitUsage {
				t.Errorf("wasend %s: exit %d (%v), want %d", strings.Join(tt.args, " "), code, err, ExitUsage)
			}
		})
	}
}

func TestAccountSetDisable(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.ok("account", "set", "fresh-02", "--disable")
	checkRows(t, "account list after --disable", c.table("account", "list"), []map[string]string{
		{"NAME": "main-01", "STATE": "ok"},
		{"NAME": "fresh-02", "STATE": "disabled"},
	})
	s := c.status()
	if a := s.Accounts[1]; !a.Disabled || a.State != "disabled" {
		t.Errorf("status --json: fresh-02 %+v, want disabled", a)
	}
	c.ok("account", "set", "fresh-02", "--enable")
	if a := c.status().Accounts[1]; a.Disabled || a.State != "ok" {
		t.Errorf("status --json after --enable: fresh-02 %+v, want ok", a)
	}
}

func TestAccountSetLimits(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	tests := []struct {
		args              []string
		wantRate          float64
		wantBurst, wantDC int
	}{
		{[]string{"--every", "2s", "--burst", "20"}, 0.5, 20, 300},
		{[]string{"--rate", "3", "--daily-cap", "1000"}, 3, 20, 1000},
		{[]string{"--reset-limits"}, 0.2, 15, 300},
		{[]string{"--tier", "warm"}, 0.125, 8, 150},
	}
	for _, tt := range tests {
		c.ok(append([]string{"account", "set", "main-01"}, tt.args...)...)
		a := c.status().Accounts[0]
		if a.Rate != tt.wantRate || a.Burst != tt.wantBurst || a.DailyCap != tt.wantDC {
			t.Errorf("after account set %v: rate %v burst %d cap %d, want %v %d %d",
				tt.args, a.Rate, a.Burst, a.DailyCap, tt.wantRate, tt.wantBurst, tt.wantDC)
		}
	}
}

func TestTierListSet(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	want := "new\t1 every 12 s\t5\t50\t1 every 12 s burst 5 cap 50\n" +
		"warm\t1 every 8 s\t8\t150\t1 every 8 s burst 8 cap 150\n" +
		"active\t1 every 5 s\t15\t300\t1 every 5 s burst 15 cap 300\n"
	if got := c.ok("tier", "list"); got != want {
		t.Errorf("tier list:\n%s\nwant:\n%s", got, want)
	}
	_, errOut, err := c.run("tier", "set", "new", "--every", "10s", "--burst", "6", "--daily-cap", "80")
	if err != nil {
		t.Fatal(err)
	}
	if w := "tier new: rate 1 every 10 s, burst 6, daily cap 80\n"; errOut != w {
		t.Errorf("tier set stderr = %q, want %q", errOut, w)
	}
	got := c.ok("tier", "list")
	if first, _, _ := strings.Cut(got, "\n"); first != "new\t1 every 10 s\t6\t80\t1 every 12 s burst 5 cap 50" {
		t.Errorf("tier list after set: first row %q", first)
	}
	c.ok("tier", "set", "new", "--defaults")
	if got := c.ok("tier", "list"); got != want {
		t.Errorf("tier list after --defaults:\n%s\nwant:\n%s", got, want)
	}

	c.tty = true
	got = c.ok("tier", "list")
	if !strings.HasPrefix(got, "TIER    RATE          BURST  DAILY CAP  DEFAULTS\nnew     1 every 12 s  5      50") {
		t.Errorf("tier list on a TTY:\n%s", got)
	}
}

func TestTierSetReachesAccounts(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.ok("tier", "set", "new", "--every", "10s")
	if a := c.status().Accounts[1]; a.Rate != 0.1 {
		t.Errorf("fresh-02 (tier new) rate %v after tier set --every 10s, want 0.1", a.Rate)
	}
}

func TestLimitGlobal(t *testing.T) {
	c := newCLI(t)
	if got := c.ok("limit", "global"); got != "global limit: off\n" {
		t.Errorf("limit global (default) = %q", got)
	}
	if s := c.status(); s.GlobalLimit != nil {
		t.Errorf("status global_limit = %+v, want null by default", s.GlobalLimit)
	}
	if got := c.ok("limit", "global", "--rate", "2", "--burst", "10"); got != "global limit: rate 2/s, burst 10, tokens now 10.0\n" {
		t.Errorf("limit global --rate 2 --burst 10 = %q", got)
	}
	s := c.status()
	if g := s.GlobalLimit; g == nil || g.Rate != 2 || g.Burst != 10 {
		t.Errorf("status global_limit = %+v, want rate_per_second 2, burst 10", g)
	}
	c.ok("limit", "global", "--off")
	if s := c.status(); s.GlobalLimit != nil {
		t.Errorf("status global_limit = %+v after --off, want null", s.GlobalLimit)
	}
	raw := c.ok("status", "--json")
	if !strings.Contains(raw, `"global_limit": null`) {
		t.Errorf("status --json after --off: want \"global_limit\": null\n%s", raw)
	}
}

func TestQuotaReset(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.now = c.now.Add(24 * time.Hour) // the next quota day
	want := "main-01: new quota day 2026-12-01 (was 0/300 on 2026-11-30)\n" +
		"fresh-02: new quota day 2026-12-01 (was 0/50 on 2026-11-30)\n"
	if got := c.ok("quota", "reset"); got != want {
		t.Errorf("first quota reset:\n%s\nwant:\n%s", got, want)
	}
	got := c.ok("quota", "reset")
	if strings.Count(got, "already reset on 2026-12-01") != 2 || strings.Contains(got, "new quota day") {
		t.Errorf("second quota reset on the same day changed something:\n%s", got)
	}
	if got := c.ok("quota", "reset", "--account", "fresh-02", "--force"); got != "fresh-02: new quota day 2026-12-01 (was 0/50 on 2026-12-01)\n" {
		t.Errorf("quota reset --force:\n%s", got)
	}
	_, _, err := c.run("quota", "reset", "--account", "nobody")
	if err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("quota reset --account nobody: %v, want an error naming the account", err)
	}
	for _, a := range c.status().Accounts {
		if a.QuotaDay != "2026-12-01" {
			t.Errorf("%s: quota_day %q, want 2026-12-01", a.Name, a.QuotaDay)
		}
	}
}

func TestStatusJSONShape(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	raw := c.ok("status", "--json")
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		t.Fatalf("status --json: %v\n%s", err, raw)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	if want := []string{"accounts", "campaigns", "database", "global_limit", "portfolios", "runners"}; !slices.Equal(got, want) {
		t.Errorf("status --json keys %v, want %v", got, want)
	}
	if string(keys["campaigns"]) != "[]" {
		t.Errorf("campaigns = %s, want [] (never null)", keys["campaigns"])
	}
	if string(keys["runners"]) != "[]" {
		t.Errorf("runners = %s, want [] (never null)", keys["runners"])
	}

	var s struct {
		Database string `json:"database"`
		Accounts []struct {
			Name          string  `json:"name"`
			PhoneNumberID string  `json:"phone_number_id"`
			Tier          string  `json:"tier"`
			TokenEnv      string  `json:"token_env"`
			Rate          float64 `json:"rate_per_second"`
			Burst         int     `json:"burst"`
			DailyCap      int     `json:"daily_cap"`
			Tokens        float64 `json:"tokens"`
			SentToday     int     `json:"sent_today"`
			QuotaDay      string  `json:"quota_day"`
			State         string  `json:"state"`
			Disabled      bool    `json:"disabled"`
		} `json:"accounts"`
		GlobalLimit *struct {
			Rate  float64 `json:"rate_per_second"`
			Burst int     `json:"burst"`
		} `json:"global_limit"`
		Campaigns []json.RawMessage `json:"campaigns"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	if s.Database != c.db {
		t.Errorf("database = %q, want %q", s.Database, c.db)
	}
	if len(s.Accounts) != 2 {
		t.Fatalf("accounts: %d, want 2\n%s", len(s.Accounts), raw)
	}
	a := s.Accounts[0]
	if a.Name != "main-01" || a.PhoneNumberID != "1234567890" || a.Tier != "active" || a.TokenEnv != "WA_TOKEN_MAIN" ||
		a.Rate != 0.2 || a.Burst != 15 || a.DailyCap != 300 || a.Tokens != 15 || a.SentToday != 0 ||
		a.QuotaDay != "2026-11-30" || a.State != "ok" || a.Disabled {
		t.Errorf("accounts[0] = %+v", a)
	}
	if s.GlobalLimit != nil || len(s.Campaigns) != 0 {
		t.Errorf("global_limit %v, campaigns %v; want null and empty", s.GlobalLimit, s.Campaigns)
	}
}

func TestStatusTable(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	piped := c.ok("status")
	if strings.Contains(piped, "NAME") || strings.Contains(piped, "Accounts") {
		t.Errorf("piped status has headers:\n%s", piped)
	}
	// Piped, every line is a record saying its kind; one per account, and
	// the health table and global limit a terminal shows are kept.
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(piped, "\n"), "\n") {
		kind, _, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(kind, "kind=") {
			t.Errorf("piped status line %q says not what it is (kind=…)", line)
		}
		kinds[strings.TrimPrefix(kind, "kind=")]++
	}
	if kinds["account"] != 2 || kinds["account_health"] != 2 || kinds["global_limit"] != 1 {
		t.Errorf("piped status: records %v, want 2 account, 2 account_health, 1 global_limit:\n%s", kinds, piped)
	}
	c.tty = true
	tty := c.ok("status")
	for _, want := range []string{"Accounts\nNAME", "Global limit: off", "Campaigns\n", "no campaigns yet"} {
		if !strings.Contains(tty, want) {
			t.Errorf("status on a TTY lacks %q:\n%s", want, tty)
		}
	}
}

func TestCampaignRunNoAccount(t *testing.T) {
	c := newCLI(t)
	csv := filepath.Join(t.TempDir(), "promo.csv")
	if err := os.WriteFile(csv, []byte("phone\n+4915112345678\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.run("campaign", "run", csv, "--text", "hi", "--ignore-window")
	if err == nil || !strings.Contains(err.Error(), "no enabled account") {
		t.Errorf("campaign run without accounts: %v, want \"no enabled account\"", err)
	}
}

func TestCampaignListEmpty(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	if got := c.ok("campaign", "list", "--json"); got != "[]\n" {
		t.Errorf("campaign list --json = %q, want []", got)
	}
	if got := c.ok("campaign", "list"); got != "" {
		t.Errorf("piped campaign list = %q, want nothing", got)
	}
	_, _, err := c.run("campaign", "retry", "7", "--unknown")
	if err == nil || !strings.Contains(err.Error(), "7") {
		t.Errorf("campaign retry 7 with no campaigns: %v, want an error naming it", err)
	}
}

func TestVersion(t *testing.T) {
	c := newCLI(t)
	out := c.ok("version")
	if !strings.HasPrefix(out, "wasend ") || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("version = %q, want one line \"wasend VERSION\"", out)
	}
}
