package logging_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/logging"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestNew(t *testing.T) {
	for _, c := range []struct {
		format, level string
		wantErr       string
		debug, info   bool
		json          bool
	}{
		{format: "text", level: "debug", debug: true, info: true},
		{format: "json", level: "info", info: true, json: true},
		{format: "JSON", level: "Warn", json: true},
		{format: "", level: "", info: true}, // defaults: text, info
		{format: "text", level: "error"},
		{format: "xml", level: "info", wantErr: `log format "xml": want one of text, json`},
		{format: "text", level: "verbose", wantErr: `log level "verbose": want one of debug, info, warn, error`},
	} {
		var buf bytes.Buffer
		log, err := logging.New(&buf, c.format, c.level)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("New(%q, %q): error %v, want %q", c.format, c.level, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%q, %q): %v", c.format, c.level, err)
			continue
		}
		log.Debug("d")
		log.Info("i")
		log.Error("e")
		out := buf.String()
		if got := logged(out, "d", c.json); got != c.debug {
			t.Errorf("New(%q, %q): debug logged %v, want %v\n%s", c.format, c.level, got, c.debug, out)
		}
		if got := logged(out, "i", c.json); got != c.info {
			t.Errorf("New(%q, %q): info logged %v, want %v\n%s", c.format, c.level, got, c.info, out)
		}
		if !logged(out, "e", c.json) {
			t.Errorf("New(%q, %q): error not logged\n%s", c.format, c.level, out)
		}
		if got := strings.HasPrefix(out, "{"); got != c.json {
			t.Errorf("New(%q, %q): JSON %v, want %v\n%s", c.format, c.level, got, c.json, out)
		}
	}
}

// logged reports whether a record with message msg was written.
func logged(out, msg string, json bool) bool {
	if json {
		return strings.Contains(out, `"msg":"`+msg+`"`)
	}
	return strings.Contains(out, "msg="+msg+"\n")
}

// records decodes JSON log lines.
func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(buf.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, r)
	}
	return out
}

func claim(msgID int64, account string) campaign.Claim {
	return campaign.Claim{
		Message: campaign.Message{ID: msgID, CampaignID: 3, Line: int(msgID) + 1, Phone: "+4915112345678", Input: "015112345678"},
		Account: campaign.Account{ID: 9, Name: account, TokenEnv: "WA_TOKEN_SECRET_ENV", PhoneNumberID: "1234567890"},
		At:      t0,
	}
}

func TestObserverOutcomes(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	observe := logging.Observer(log, 3, func() time.Time { return t0 })
	observe(dispatch.Event{Kind: dispatch.EventSent, At: t0.Add(250 * time.Millisecond), Claim: claim(1, "main-01"),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, Class: "ok", WAMID: "wamid.HBg"}})
	observe(dispatch.Event{Kind: dispatch.EventRetry, At: t0.Add(time.Second), Claim: claim(2, "main-01"),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "transient", ErrorCode: 131000,
			Error: "(#131000) Something went wrong", RetryAt: t0.Add(3 * time.Second)}})
	observe(dispatch.Event{Kind: dispatch.EventFailed, At: t0.Add(time.Second), Claim: claim(3, "main-01"),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, Class: "permanent", ErrorCode: 131026, Error: "(#131026) Message undeliverable"}})
	observe(dispatch.Event{Kind: dispatch.EventUnknown, At: t0.Add(time.Second), Claim: claim(4, "main-01"),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeUnknown, Class: "ambiguous", Error: "connection reset"}})

	recs := records(t, &buf)
	want := []map[string]any{
		{"level": "DEBUG", "msg": "send sent", "campaign": 3.0, "message": 1.0, "line": 2.0, "account": "main-01",
			"outcome": "sent", "class": "ok", "wamid": "wamid.HBg", "took": float64(250 * time.Millisecond)},
		{"level": "DEBUG", "msg": "send retry", "message": 2.0, "outcome": "retry", "class": "transient", "code": 131000.0,
			"error": "(#131000) Something went wrong", "retry_at": "2026-03-02T09:00:03Z"},
		{"level": "DEBUG", "msg": "send failed", "message": 3.0, "line": 4.0, "outcome": "failed", "class": "permanent", "code": 131026.0},
		{"level": "DEBUG", "msg": "send unknown", "message": 4.0, "outcome": "unknown", "class": "ambiguous", "error": "connection reset"},
	}
	checkRecords(t, recs, want)
	if recs[0]["code"] != nil || recs[1]["wamid"] != nil {
		t.Errorf("empty code or wamid logged: %v %v", recs[0], recs[1])
	}
	noSecrets(t, buf.String())
}

func checkRecords(t *testing.T, recs, want []map[string]any) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %v", len(recs), len(want), recs)
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d %q: %v (%T), want %v (%T)", i, k, recs[i][k], recs[i][k], v, v)
			}
		}
	}
}

// noSecrets: neither the token's variable nor the recipient's number.
func noSecrets(t *testing.T, out string) {
	t.Helper()
	for _, s := range []string{"WA_TOKEN_SECRET_ENV", "4915112345678", "015112345678"} {
		if strings.Contains(out, s) {
			t.Errorf("log contains %q:\n%s", s, out)
		}
	}
}

func TestObserverStateChanges(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	observe := logging.Observer(log, 3, func() time.Time { return t0 })
	throttled := campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "throttled", ErrorCode: 130429,
		Throttle: &campaign.Throttle{Cooldown: 30 * time.Second, Hint: 45 * time.Second}}
	restricted := campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "long-restriction", ErrorCode: 131048,
		Restrict: 6 * time.Hour, Error: "(#131048) Spam rate limit hit"}
	dropped := campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "account-fatal", ErrorCode: 190,
		DropAccount: true, Error: "(#190) Invalid OAuth access token"}
	paused := campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "campaign-fatal", ErrorCode: 132001, Pause: "error 132001: template does not exist"}
	for _, ev := range []dispatch.Event{
		// Send outcomes, token waits and resumes are debug: not shown at info.
		{Kind: dispatch.EventRetry, At: t0, Claim: claim(1, "fresh-02"), Outcome: throttled},
		{Kind: dispatch.EventAccount, At: t0, Claim: claim(1, "fresh-02"), Outcome: throttled},
		{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitTokens, Until: t0.Add(5 * time.Second)}},
		{Kind: dispatch.EventResumed, At: t0.Add(5 * time.Second)},
		{Kind: dispatch.EventAccount, At: t0, Claim: claim(2, "warm-03"), Outcome: restricted},
		{Kind: dispatch.EventAccount, At: t0, Claim: claim(3, "main-01"), Outcome: dropped},
		{Kind: dispatch.EventAccount, At: t0, Claim: claim(4, "main-01"), Outcome: dropped}, // the same news again
		{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitCapped}},
		{Kind: dispatch.EventPaused, At: t0, Claim: claim(5, "main-01"), Outcome: paused},
	} {
		observe(ev)
	}
	recs := records(t, &buf)
	checkRecords(t, recs, []map[string]any{
		{"level": "INFO", "msg": "account throttled", "campaign": 3.0, "account": "fresh-02", "code": 130429.0,
			"cooldown": float64(30 * time.Second), "hint": float64(45 * time.Second)},
		{"level": "WARN", "msg": "account restricted", "account": "warm-03", "code": 131048.0,
			"for": float64(6 * time.Hour), "error": "(#131048) Spam rate limit hit"},
		{"level": "WARN", "msg": "account dropped from campaign", "account": "main-01", "code": 190.0, "error": "(#190) Invalid OAuth access token"},
		{"level": "WARN", "msg": "waiting", "campaign": 3.0, "reason": "capped"},
		{"level": "WARN", "msg": "campaign paused", "campaign": 3.0, "reason": "error 132001: template does not exist"},
	})
	if recs[3]["until"] != nil {
		t.Errorf("a wait without a known end logged until: %v", recs[3])
	}
	noSecrets(t, buf.String())
}

func TestObserverConcurrent(t *testing.T) {
	var buf syncBuffer
	log, err := logging.New(&buf, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	observe := logging.Observer(log, 3, func() time.Time { return t0 })
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			observe(dispatch.Event{Kind: dispatch.EventSent, At: t0, Claim: claim(int64(i), "main-01"),
				Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, Class: "ok", WAMID: "w"}})
			observe(dispatch.Event{Kind: dispatch.EventAccount, At: t0, Claim: claim(int64(i), "main-01"),
				Outcome: campaign.Outcome{DropAccount: true, ErrorCode: 190}})
		})
	}
	wg.Wait()
	b := bytes.NewBufferString(buf.String())
	var sent, drops int
	for _, r := range records(t, b) {
		switch r["msg"] {
		case "send sent":
			sent++
		case "account dropped from campaign":
			drops++
		}
	}
	if sent != 50 || drops != 1 {
		t.Errorf("%d sends and %d drops logged, want 50 and 1", sent, drops)
	}
}

// syncBuffer is a bytes.Buffer for writers on several goroutines; slog's
// handlers serialise their own writes, this only guards the final read.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Every line names its campaign once: `campaign=4 campaign=4` was seen when
// the caller's logger carried the campaign too.
func TestObserverCampaignOnce(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "text", "debug")
	if err != nil {
		t.Fatal(err)
	}
	observe := logging.Observer(log, 3, func() time.Time { return t0 })
	observe(dispatch.Event{Kind: dispatch.EventSent, At: t0, Claim: claim(1, "main-01"),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, Class: "ok", WAMID: "w"}})
	observe(dispatch.Event{Kind: dispatch.EventAccount, At: t0, Claim: claim(2, "main-01"),
		Outcome: campaign.Outcome{DropAccount: true, ErrorCode: 190, Error: "x"}})
	observe(dispatch.Event{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitCapped}})
	observe(dispatch.Event{Kind: dispatch.EventPaused, At: t0, Claim: claim(5, "main-01"), Outcome: campaign.Outcome{Pause: "p"}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if n := strings.Count(l, " campaign=3"); n != 1 {
			t.Errorf("campaign=3 %d times in %q, want once", n, l)
		}
	}
}

// A wait for the shared limits logs its user-facing detail at warn; the
// gates' errors whole, with their claim ids, only at debug.
func TestObserverSharedLimitsWait(t *testing.T) {
	wait := &campaign.WaitError{Reason: campaign.WaitLimitsLost, Detail: "portfolio p1: Redis holds no state for it",
		Debug: "portfolio p1: admit 1f2e:24:1: the shared limits hold no state"}
	for _, tt := range []struct {
		level string
		want  []map[string]any
	}{
		{"info", []map[string]any{{"level": "WARN", "msg": "waiting", "reason": "limits-lost", "detail": wait.Detail}}},
		{"debug", []map[string]any{{"level": "WARN", "msg": "waiting", "reason": "limits-lost", "detail": wait.Detail},
			{"level": "DEBUG", "msg": "shared limits error", "error": wait.Debug}}},
	} {
		var buf bytes.Buffer
		log, err := logging.New(&buf, "json", tt.level)
		if err != nil {
			t.Fatal(err)
		}
		logging.Observer(log, 3, func() time.Time { return t0 })(dispatch.Event{Kind: dispatch.EventWait, At: t0, Wait: wait})
		recs := records(t, &buf)
		checkRecords(t, recs, tt.want)
		if tt.level == "info" && strings.Contains(buf.String(), "1f2e:24:1") {
			t.Errorf("a claim id at info: %s", buf.String())
		}
	}
}

// A wait's end is logged only when it is still ahead, with how long that
// is: an end already passed when the wait is logged would read as a wait
// that is over.
func TestWaitUntilOnlyAhead(t *testing.T) {
	tests := []struct {
		name      string
		until     time.Time
		wantUntil bool
		wantFor   time.Duration
	}{
		{name: "ahead", until: t0.Add(3*time.Second + 200*time.Millisecond), wantUntil: true, wantFor: 3 * time.Second},
		{name: "under a second ahead", until: t0.Add(250 * time.Millisecond), wantUntil: true, wantFor: 250 * time.Millisecond},
		{name: "passed", until: t0.Add(-2 * time.Second)},
		{name: "now", until: t0},
		{name: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := logging.New(&buf, "json", "info")
			if err != nil {
				t.Fatal(err)
			}
			logging.Observer(log, 3, func() time.Time { return t0 })(dispatch.Event{Kind: dispatch.EventWait, At: t0,
				Wait: &campaign.WaitError{Reason: campaign.WaitWindow, Until: tt.until}})
			recs := records(t, &buf)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %v", len(recs), recs)
			}
			if _, got := recs[0]["until"]; got != tt.wantUntil {
				t.Errorf("until logged: %v, want %v: %v", got, tt.wantUntil, recs[0])
			}
			if tt.wantUntil && recs[0]["for"] != float64(tt.wantFor) {
				t.Errorf("for = %v, want %v", recs[0]["for"], float64(tt.wantFor))
			}
			if !tt.wantUntil && recs[0]["for"] != nil {
				t.Errorf("for logged for a wait with no end ahead: %v", recs[0])
			}
		})
	}
}

// A wait worked out before a claim that took a while is logged after its
// end: the line then has no until (issue 26: `waiting` lines carried an
// until= before their own time), and its time is when it was written.
func TestWaitUntilPassedWhenWritten(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	written := t0.Add(5 * time.Second)
	observe := logging.Observer(log, 3, func() time.Time { return written })
	observe(dispatch.Event{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitWindow, Until: t0.Add(3 * time.Second)}})
	observe(dispatch.Event{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitCapped, Until: t0.Add(8 * time.Second)}})
	recs := records(t, &buf)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2: %v", len(recs), recs)
	}
	for i, r := range recs {
		if r["time"] != written.Format(time.RFC3339) {
			t.Errorf("record %d stamped %v, want %v", i, r["time"], written)
		}
	}
	if recs[0]["until"] != nil {
		t.Errorf("until logged though passed when written: %v", recs[0])
	}
	if recs[1]["until"] == nil || recs[1]["for"] != float64(3*time.Second) {
		t.Errorf("a wait still ahead: until and for 3 s wanted: %v", recs[1])
	}
}
