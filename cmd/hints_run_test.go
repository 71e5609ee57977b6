package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/ui"
)

// A command line a message offers to paste is in backticks, or follows a
// colon, "or " or "run " (`…: wasend campaign run --resume 1 --db …`), or
// starts a line of its own indented by two spaces. Prose
// that only names a command ("add one with wasend account add, giving it a
// name") is neither, and holds no placeholder.
var (
	backticked = regexp.MustCompile("(cron's |by the operator \\()?`(wasend [^`]*)`")
	offered    = regexp.MustCompile(`(?m)(?:: |\bor |\brun |^  )(wasend [^()\n;]*)`)
	// placeholder is a word a pasted line would carry literally.
	placeholder = regexp.MustCompile(`^(NAME|ID|URL|FILE|NUMBER|TIER|VAR|CODE|FILE\.csv)$`)
)

// hintsIn is every command line text offers, in order. A backticked line
// after "cron's " or "by the operator (" names what cron runs or what the
// operator ran (a pause's reason), not something to paste.
func hintsIn(text string) []string {
	var hints []string
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if m[1] == "" {
			hints = append(hints, m[2])
		}
	}
	for _, m := range offered.FindAllStringSubmatch(backticked.ReplaceAllString(text, ""), -1) {
		hints = append(hints, strings.TrimRight(m[1], " ."))
	}
	return hints
}

// shellWords splits line as a POSIX shell does for what hints print: words
// separated by blanks, with '…', "…" and \ quoting. Anything a shell would
// expand ($, `, *, ?) is refused: a hint must not depend on it.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '$', '`':
				return nil, fmt.Errorf("%q: %c inside double quotes", line, r)
			case '\\':
				if i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]) {
					i++
					w.WriteRune(rs[i])
				} else {
					w.WriteRune(r)
				}
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 < len(rs) {
				i++
				w.WriteRune(rs[i])
				in = true
			}
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case strings.ContainsRune("$`*?[]{}<>|&;~#", r):
			return nil, fmt.Errorf("%q: the shell would read %c", line, r)
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated quote", line)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"wasend status --db /tmp/w.db", []string{"wasend", "status", "--db", "/tmp/w.db"}},
		{`wasend status --db '/tmp/my w'\''s.db'`, []string{"wasend", "status", "--db", "/tmp/my w's.db"}},
		{`wasend status --db "/tmp/a b"`, []string{"wasend", "status", "--db", "/tmp/a b"}},
	} {
		got, err := shellWords(tt.line)
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	for _, bad := range []string{"wasend status --db $WASEND_DB", "wasend x 'open"} {
		if _, err := shellWords(bad); err == nil {
			t.Errorf("shellWords(%q) accepted", bad)
		}
	}
}

// hintRunner runs wasend as the operator would: only the words given, no
// --db added, in an environment where the default database is a fresh,
// empty directory — so a hint that drops --db or --sandbox fails.
type hintRunner struct {
	t   *testing.T
	env map[string]string
	now time.Time
}

func newHintRunner(t *testing.T) *hintRunner {
	return &hintRunner{t: t, now: time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC),
		env: map[string]string{"WASEND_TZ": "UTC", "XDG_DATA_HOME": t.TempDir(), "HOME": t.TempDir()}}
}

// run executes wasend args… until ctx ends; it returns everything printed.
func (h *hintRunner) run(ctx context.Context, args ...string) (string, error) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	now := h.now
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(h.env), Now: func() time.Time { return now }}
	root := NewRootCmd(f)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String() + errOut.String(), err
}

func (h *hintRunner) ok(args ...string) string {
	h.t.Helper()
	got, err := h.run(context.Background(), args...)
	if err != nil {
		h.t.Fatalf("wasend %s: %v\n%s", strings.Join(args, " "), err, got)
	}
	return got
}

// runHints pastes every hint in printed, in order, and wants each to
// succeed; it returns what the pasted lines printed. It fails when printed
// offers none: a scenario whose hint went missing proves nothing.
func (h *hintRunner) runHints(printed string) string {
	h.t.Helper()
	var all strings.Builder
	hints := hintsIn(printed)
	if len(hints) == 0 {
		h.t.Fatalf("no hint to paste in:\n%s", printed)
	}
	for _, line := range hints {
		h.t.Logf("pasting %s", line)
		words, err := shellWords(line)
		if err != nil {
			h.t.Errorf("hint %q does not paste: %v", line, err)
			continue
		}
		for _, w := range words {
			if placeholder.MatchString(w) {
				h.t.Errorf("hint %q has the placeholder %s", line, w)
			}
		}
		if len(words) < 2 || words[0] != "wasend" {
			h.t.Errorf("hint %q is not a wasend command line", line)
			continue
		}
		got, err := h.run(context.Background(), words[1:]...)
		if err != nil {
			h.t.Errorf("pasted %q: %v\n%s", line, err, got)
		}
		all.WriteString(got)
	}
	return all.String()
}

// Every hint the scenarios below print works when pasted: run as printed,
// in order, against the same sandbox, each succeeds.
func TestHintsRunWhenPasted(t *testing.T) {
	fast := func(h *hintRunner, db string) {
		for _, tier := range []string{"new", "warm", "active"} {
			h.ok("--db", db, "tier", "set", tier, "--rate", "1000", "--burst", "100", "--daily-cap", "1000")
		}
	}
	t.Run("cap-bound run", func(t *testing.T) {
		h := newHintRunner(t)
		db := t.TempDir() + "/my w's.db" // a path the shell must have quoted
		for _, tier := range []string{"new", "warm", "active"} {
			h.ok("--db", db, "tier", "set", tier, "--rate", "1000", "--burst", "100", "--daily-cap", "1")
		}
		printed, err := h.run(context.Background(), "--db", db, "--sandbox", "campaign", "run", "--stop-when-capped", "../testdata/recipients.csv")
		if code := exitCode(err, &strings.Builder{}); code != ExitCapped {
			t.Fatalf("exit %d (%v), want %d\n%s", code, err, ExitCapped, printed)
		}
		fast(h, db) // what the operator changes before the next day
		h.runHints(printed)
	})
	t.Run("interrupted run", func(t *testing.T) {
		h := newHintRunner(t)
		db := t.TempDir() + "/wasend.db"
		for _, tier := range []string{"new", "warm", "active"} {
			h.ok("--db", db, "tier", "set", tier, "--rate", "1", "--burst", "1")
		}
		// Ctrl-C while it waits for tokens (40 rows at 1/s).
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(2*time.Second, cancel)
		defer stop.Stop()
		printed, err := h.run(ctx, "--db", db, "--sandbox", "campaign", "run", "../testdata/recipients.csv")
		if !errors.Is(err, context.Canceled) || !strings.Contains(printed, "interrupted") {
			t.Fatalf("not interrupted (%v):\n%s", err, printed)
		}
		fast(h, db)
		h.runHints(printed)
	})
	t.Run("paused campaign", func(t *testing.T) {
		h := newHintRunner(t)
		db := t.TempDir() + "/wasend.db"
		fast(h, db)
		h.ok("--db", db, "--sandbox", "campaign", "import", "../testdata/recipients.csv")
		paused := h.ok("--db", db, "--sandbox", "campaign", "pause", "1")
		status := h.ok("--db", db, "--sandbox", "status")
		if !strings.Contains(status, "is paused") {
			t.Fatalf("status does not say paused:\n%s", status)
		}
		h.runHints(status) // the resume sends the campaign
		h.runHints(paused) // and resuming it again finds it done
	})
	t.Run("import, then send", func(t *testing.T) {
		h := newHintRunner(t)
		db := t.TempDir() + "/wasend.db"
		fast(h, db)
		h.runHints(h.ok("--db", db, "--sandbox", "campaign", "import", "../testdata/recipients.csv"))
	})
	t.Run("failed rows retried", func(t *testing.T) {
		list := writePreflightList(t, "promo.csv", 0, 6)
		box := sandbox.New(sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{FailNumbers: map[string]int{"+4915100000002": 131026}}})
		srv := httptest.NewServer(box)
		t.Cleanup(srv.Close)
		h := newHintRunner(t)
		h.env["WASEND_API_BASE"], h.env["WA_TOKEN_MAIN"] = srv.URL, "token"
		db := t.TempDir() + "/wasend.db"
		h.ok("--db", db, "account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "active", "--token-env", "WA_TOKEN_MAIN")
		h.ok("--db", db, "tier", "set", "active", "--rate", "1000", "--burst", "100")
		if got := h.ok("--db", db, "campaign", "run", list, "--text", "hi", "--ignore-window"); !strings.Contains(got, "failed 1") {
			t.Fatalf("want one failed row:\n%s", got)
		}
		// The resend fails again (131026 is permanent): the documented
		// outcome of a run that records its failures is success.
		h.runHints(h.ok("--db", db, "campaign", "retry", "1", "--all-failed"))
	})
	t.Run("unknown rows resent", func(t *testing.T) {
		list := writePreflightList(t, "promo.csv", 0, 3)
		// Every send is accepted, then its answer lost; once the operator
		// pastes the hints, the API answers again.
		var box atomic.Pointer[sandbox.Server]
		box.Store(sandbox.New(sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{Drop: 1}}))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { box.Load().ServeHTTP(w, r) }))
		t.Cleanup(srv.Close)
		h := newHintRunner(t)
		h.env["WASEND_API_BASE"], h.env["WA_TOKEN_MAIN"] = srv.URL, "token"
		db := t.TempDir() + "/wasend.db"
		h.ok("--db", db, "account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "active", "--token-env", "WA_TOKEN_MAIN")
		h.ok("--db", db, "tier", "set", "active", "--rate", "1000", "--burst", "100")
		printed, _ := h.run(context.Background(), "--db", db, "campaign", "run", list, "--text", "hi", "--ignore-window")
		if !strings.Contains(printed, "unknown 3") {
			t.Fatalf("want three unknown rows:\n%s", printed)
		}
		box.Store(sandbox.New(sandbox.Options{PairInterval: -1}))
		// retry --unknown prints the resume that sends them: paste it too.
		h.runHints(h.runHints(printed))
	})
	t.Run("Redis lost the shared state", func(t *testing.T) {
		r := redistest.Start(t)
		for _, env := range []bool{false, true} {
			h := newHintRunner(t)
			db := t.TempDir() + "/wasend.db"
			h.ok("--db", db, "account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "active", "--token-env", "WA_TOKEN_MAIN")
			h.ok("--db", db, "account", "add", "fresh-02", "--phone-number-id", "2345678901", "--tier", "new", "--token-env", "WA_TOKEN_FRESH")
			h.ok("--db", db, "portfolio", "add", fmt.Sprint("acme", env), "--limit", "1000")
			h.ok("--db", db, "account", "set", "fresh-02", "--portfolio", fmt.Sprint("acme", env))
			url := "redis://" + r.Addr() + "/" + map[bool]string{false: "1", true: "2"}[env]
			args := []string{"--db", db, "--limits", url}
			if env { // WASEND_LIMITS carries over by itself
				h.env["WASEND_LIMITS"] = url
				args = args[:2]
			}
			h.ok(append(args, "quota", "reset", "--force", "--account", "main-01")...)
			printed := h.ok(append(args, "limits", "status")...)
			if !strings.Contains(printed, "holds no shared state") {
				t.Fatalf("no lost portfolio:\n%s", printed)
			}
			h.runHints(printed)
			if got := h.ok(append(args, "limits", "status")...); strings.Contains(got, "holds no shared state") {
				t.Errorf("the pasted reset did not rebuild the day (WASEND_LIMITS %v):\n%s", env, got)
			}
		}
	})
}
