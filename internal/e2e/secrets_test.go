package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestTokenNeverLeaks runs a campaign whose accounts read a recognisable
// access token, against a sandbox that throttles, declares one account's
// token expired (190, from its first request), and echoes the Authorization header back inside
// Graph error bodies, as a misbehaving proxy might. The token must appear
// in no command's output and in no byte of the database, its WAL, or any
// other file wasend leaves behind.
func TestTokenNeverLeaks(t *testing.T) {
	const (
		secret    = "EAAG-SECRET-e2e-7f3a"
		secretEnv = "WA_TOKEN_E2E_SECRET" // not WASEND_*: world.env keeps it
		goodPNID  = "100000000000021"
		fatalPNID = "100000000000022"
		n         = 30
		first     = 4915112370000
	)
	t.Setenv(secretEnv, secret)

	api := sandbox.New(sandbox.Options{
		PairInterval: -1,
		Faults: sandbox.Faults{
			Seed:     7,
			Throttle: 0.05,
			// A throttled account rests for the server's hint rather than
			// wasend's default cool-down, so the run stays short.
			RetryAfter:    time.Second,
			FatalAccounts: map[string]sandbox.FatalAccount{fatalPNID: {Code: 190}},
		},
	})
	// Recipients whose every request is answered with a 131000 echoing the
	// Authorization header: in error_data.details, or in message and
	// fbtrace_id.
	echoDetails := map[string]bool{"+4915112370001": true, "+4915112370002": true}
	echoMessage := map[string]bool{"+4915112370003": true}
	var echoed atomic.Int64
	var sawSecret atomic.Bool // the token really was sent: the test is not vacuous
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		var m struct {
			To string `json:"to"`
		}
		_ = json.Unmarshal(body, &m)
		auth := r.Header.Get("Authorization")
		if auth == "Bearer "+secret {
			sawSecret.Store(true)
		}
		if echoDetails[m.To] || echoMessage[m.To] {
			echoed.Add(1)
			e := map[string]any{
				"message": "(#131000) Something went wrong",
				"type":    "OAuthException",
				"code":    131000,
				"error_data": map[string]any{
					"messaging_product": "whatsapp",
					"details":           "upstream rejected request with Authorization: " + auth,
				},
				"fbtrace_id": "AbCdEf123",
			}
			if echoMessage[m.To] {
				e["message"] = "(#131000) Something went wrong for " + auth
				e["fbtrace_id"] = auth
				e["error_data"] = map[string]any{"messaging_product": "whatsapp"}
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(rw).Encode(map[string]any{"error": e})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		api.ServeHTTP(rw, r)
	})
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	w := worldAt(t, api, ts.URL)

	var results []result
	var names []string
	keep := func(r result, args ...string) result {
		results = append(results, r)
		names = append(names, strings.Join(args, " "))
		return r
	}
	ok := func(args ...string) result { t.Helper(); return keep(w.OK(args...), args...) }

	for _, tier := range []string{"new", "warm", "active"} {
		ok("tier", "set", tier, "--rate", "40", "--burst", "5", "--daily-cap", "100000")
	}
	ok("account", "add", "good", "--phone-number-id", goodPNID, "--tier", "active", "--token-env", secretEnv)
	ok("account", "add", "doomed", "--phone-number-id", fatalPNID, "--tier", "warm", "--token-env", secretEnv)

	csv := w.WriteCSV("secret.csv", first, n)
	run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name",
		"--max-attempts", "2", "--backoff-base", "10ms", "--backoff-max", "20ms"}

	// While the campaign runs, its WAL holds the freshest pages.
	p := w.Start(run...)
	var snapshots [][]byte
	for i := 0; i < 40 && !p.Exited(); i++ {
		for _, suffix := range []string{"", "-wal", "-journal"} {
			if b, err := os.ReadFile(w.DB + suffix); err == nil {
				snapshots = append(snapshots, b)
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	// 0: finished; 4: paused; 5: no usable account. Which one depends on
	// how wasend treats the fatal account, not on what this test checks.
	r := keep(p.Wait(t), run...)
	if r.Code != 0 && r.Code != 4 && r.Code != 5 {
		t.Fatalf("campaign run: %s", r)
	}
	t.Logf("campaign run: exit %d\n%s", r.Code, r.Stderr)

	ok("status")
	ok("status", "--json")
	ok("account", "list")
	ok("account", "list", "--json")
	ok("campaign", "list")
	ok("campaign", "list", "--json")
	// The dead-letter list shows stored error messages, where they exist.
	keep(w.Run("campaign", "failed", "1"), "campaign failed 1")
	ok("campaign", "retry", "1", "--unknown")
	keep(w.Run(append(run[:0:0], "campaign", "run", "--resume", "1", "--max-attempts", "2", "--backoff-base", "10ms", "--backoff-max", "20ms")...),
		"campaign run --resume 1")
	// An account whose variable is unset is left out of a run, named,
	// never valued; the others send.
	ok("account", "add", "spare", "--phone-number-id", "100000000000023", "--token-env", "WA_TOKEN_E2E_UNSET")
	spare := append([]string{"campaign", "run", w.WriteCSV("spare.csv", first+1000, 5)}, run[3:]...)
	unset := keep(w.Run(spare...), spare...)
	if unset.Code == 1 || !strings.Contains(unset.Stderr, "account spare (phone number id 100000000000023) is LEFT OUT") ||
		!strings.Contains(unset.Stderr, "WA_TOKEN_E2E_UNSET") {
		t.Errorf("campaign run with WA_TOKEN_E2E_UNSET unset: want spare left out naming the variable, the run going on\n%s", unset)
	}

	// The faults happened: otherwise the test proves little.
	if echoed.Load() == 0 {
		t.Fatal("no request reached the echoing handler")
	}
	if !sawSecret.Load() {
		t.Fatalf("no request carried \"Authorization: Bearer %s\"; the accounts did not use the token", secret)
	}
	codes := map[int]int{}
	for _, rec := range api.Records() {
		codes[rec.Code]++
	}
	if codes[190] == 0 {
		t.Errorf("the sandbox never answered 190 for %s: %v", fatalPNID, codes)
	}
	if codes[130429] == 0 {
		t.Logf("no throttling answer in this run: %v", codes)
	}
	var redacted int
	var stored []string
	w.Query(`SELECT coalesce(error_message, '') FROM messages WHERE error_message IS NOT NULL`, func(rs *sql.Rows) error {
		var s string
		if err := rs.Scan(&s); err != nil {
			return err
		}
		stored = append(stored, s)
		if strings.Contains(s, "[redacted]") {
			redacted++
		}
		return nil
	})
	if redacted < len(echoDetails)+len(echoMessage) {
		t.Errorf("%d stored error messages show [redacted], want at least %d (one per echoing recipient):\n%s",
			redacted, len(echoDetails)+len(echoMessage), strings.Join(stored, "\n"))
	}

	needles := []string{secret, "SECRET-e2e"}
	for i, r := range results {
		for _, s := range needles {
			if strings.Contains(r.Stdout, s) || strings.Contains(r.Stderr, s) {
				t.Errorf("wasend %s: output contains %q\n%s", names[i], s, r)
			}
		}
	}
	for i, b := range snapshots {
		for _, s := range needles {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("database snapshot %d taken while running contains %q", i, s)
			}
		}
	}
	files := 0
	err := filepath.WalkDir(w.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, s := range needles {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains %q", filepath.Base(path), s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.DB); err != nil {
		t.Fatalf("database: %v", err)
	}
	t.Logf("stored error messages:\n%s", strings.Join(stored, "\n"))
	t.Logf("checked %d command outputs, %d running snapshots, %d files; sandbox codes %v", len(results), len(snapshots), files, codes)
}
