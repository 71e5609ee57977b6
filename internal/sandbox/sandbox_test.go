package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/clock"
)

const token = "sandbox-test-token"

// newFakeClock is a settable clock for limits: the shared simulated clock.
func newFakeClock() *clock.Sim { return clock.NewSim(time.Date(2026, 9, 11, 12, 0, 0, 0, time.UTC)) }

func startServer(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func templateJSON(to, name string, params ...string) string {
	m := map[string]any{
		"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "template",
		"biz_opaque_callback_data": "wasend:c1:" + to,
		"template":                 map[string]any{"name": name, "language": map[string]string{"code": "en", "policy": "deterministic"}},
	}
	if len(params) > 0 {
		ps := make([]map[string]string, len(params))
		for i, p := range params {
			ps[i] = map[string]string{"type": "text", "text": p}
		}
		m["template"].(map[string]any)["components"] = []map[string]any{{"type": "body", "parameters": ps}}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func demo(to string) string { return templateJSON(to, DemoTemplate, "Ana", "1234") }

// result is a decoded answer: either success or a Graph error.
type result struct {
	status int
	header http.Header
	err    error // transport error
	ok     struct {
		MessagingProduct string `json:"messaging_product"`
		Contacts         []struct {
			Input string `json:"input"`
			WaID  string `json:"wa_id"`
		} `json:"contacts"`
		Messages []struct {
			ID            string `json:"id"`
			MessageStatus string `json:"message_status"`
		} `json:"messages"`
	}
	graph graphError
}

func do(t *testing.T, method, url, auth, body string) result {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{err: err}
	}
	r := result{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(data, &r.ok)
	} else {
		err = json.Unmarshal(data, &r.graph)
	}
	if err != nil {
		t.Fatalf("%s %s: HTTP %d with an unreadable body %q: %v", method, url, resp.StatusCode, data, err)
	}
	return r
}

func post(t *testing.T, ts *httptest.Server, phoneNumberID, body string) result {
	t.Helper()
	return do(t, http.MethodPost, ts.URL+"/v25.0/"+phoneNumberID+"/messages", "Bearer "+token, body)
}

func TestSuccessShape(t *testing.T) {
	s, ts := startServer(t, Options{})
	r := post(t, ts, "1065", demo("+16505551234"))
	if r.err != nil || r.status != 200 {
		t.Fatalf("status %d, err %v", r.status, r.err)
	}
	if r.ok.MessagingProduct != "whatsapp" || len(r.ok.Contacts) != 1 || len(r.ok.Messages) != 1 {
		t.Fatalf("answer = %+v", r.ok)
	}
	if c := r.ok.Contacts[0]; c.Input != "+16505551234" || c.WaID != "16505551234" {
		t.Errorf("contact = %+v", c)
	}
	m := r.ok.Messages[0]
	if !strings.HasPrefix(m.ID, "wamid.") || m.MessageStatus != "accepted" {
		t.Errorf("message = %+v", m)
	}
	text := `{"messaging_product":"whatsapp","to":"+447700900123","type":"text","text":{"body":"hello"}}`
	r2 := post(t, ts, "1065", text)
	if r2.status != 200 || r2.ok.Messages[0].ID == m.ID {
		t.Errorf("second answer %d %+v: want a new wamid", r2.status, r2.ok)
	}
	if got := s.Accepted(); got["+16505551234"] != 1 || got["+447700900123"] != 1 || len(got) != 2 {
		t.Errorf("Accepted = %v", got)
	}
}

func TestRequestErrors(t *testing.T) {
	_, ts := startServer(t, Options{})
	api := ts.URL + "/v25.0/1065/messages"
	valid := demo("+16505551234")
	tests := []struct {
		name        string
		method, url string
		auth, body  string
		wantStatus  int
		wantCode    int
		wantDetails string
	}{
		{"no token", "POST", api, "", valid, 401, 190, "bearer token"},
		{"empty bearer", "POST", api, "Bearer ", valid, 401, 190, "bearer token"},
		{"basic auth", "POST", api, "Basic abc", valid, 401, 190, "bearer token"},
		{"invalid json", "POST", api, "Bearer t", `{"to":`, 400, 100, "not valid JSON"},
		{"no messaging_product", "POST", api, "Bearer t", `{"to":"+1650555","type":"text","text":{"body":"x"}}`, 400, 100, "messaging_product"},
		{"wrong messaging_product", "POST", api, "Bearer t", `{"messaging_product":"sms","to":"+1650555","type":"text","text":{"body":"x"}}`, 400, 100, `"whatsapp"`},
		{"no to", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","type":"text","text":{"body":"x"}}`, 400, 100, "parameter to"},
		{"bad to", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"call me","type":"text","text":{"body":"x"}}`, 400, 100, "not a phone number"},
		{"no type", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555"}`, 400, 100, "parameter type"},
		{"no template", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"template"}`, 400, 100, "template object"},
		{"no template name", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"template","template":{"language":{"code":"en"}}}`, 400, 100, "template.name"},
		{"no language", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"template","template":{"name":"x"}}`, 400, 100, "template.language.code"},
		{"bad policy", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"template","template":{"name":"x","language":{"code":"en","policy":"fallback"}}}`, 400, 100, "policy"},
		{"empty parameter", "POST", api, "Bearer t", templateJSON("+1650555", DemoTemplate, "Ana", " "), 400, 131008, "parameters[1].text is empty"},
		{"no text body", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"text","text":{}}`, 400, 100, "text.body"},
		{"text too long", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"text","text":{"body":"` + strings.Repeat("x", 4097) + `"}}`, 400, 100, "4096"},
		{"unsupported type", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","to":"+1650555","type":"image","image":{"id":"1"}}`, 400, 131051, `"image"`},
		{"group recipient", "POST", api, "Bearer t", `{"messaging_product":"whatsapp","recipient_type":"group","to":"+1650555","type":"text","text":{"body":"x"}}`, 400, 100, "recipient_type"},
		{"unknown path", "POST", ts.URL + "/v25.0/1065/media", "Bearer t", valid, 404, 100, "unknown path"},
		{"no version", "POST", ts.URL + "/1065/messages", "Bearer t", valid, 404, 100, "unknown path"},
		{"GET messages", "GET", api, "Bearer t", "", 405, 100, "GET"},
		{"POST records", "POST", ts.URL + RecordsPath, "", "", 405, 100, "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, tt.method, tt.url, tt.auth, tt.body)
			if r.err != nil {
				t.Fatal(r.err)
			}
			g := r.graph.Error
			if r.status != tt.wantStatus || g.Code != tt.wantCode {
				t.Fatalf("HTTP %d code %d, want HTTP %d code %d (%+v)", r.status, g.Code, tt.wantStatus, tt.wantCode, g)
			}
			if !strings.Contains(g.ErrorData.Details, tt.wantDetails) {
				t.Errorf("details %q, want it to mention %q", g.ErrorData.Details, tt.wantDetails)
			}
			if want := fmt.Sprintf("(#%d) %s", tt.wantCode, title(tt.wantCode)); g.Message != want || g.Type != "OAuthException" {
				t.Errorf("message %q type %q, want %q OAuthException", g.Message, g.Type, want)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name        string
		faults      Faults
		to          string
		body        string
		wantStatus  int // 0: connection closed without an answer
		wantCode    int
		wantOutcome string
		wantRetry   string
		wantCounted bool // in Accepted
	}{
		{name: "none", to: "+111111111", wantStatus: 200, wantOutcome: OutcomeAccepted, wantCounted: true},
		{name: "throttle", faults: Faults{Throttle: 1}, to: "+111111111", wantStatus: 400, wantCode: 130429, wantOutcome: OutcomeThrottled},
		{name: "throttle with retry-after", faults: Faults{Throttle: 1, RetryAfter: 1500 * time.Millisecond}, to: "+111111111",
			wantStatus: 400, wantCode: 130429, wantOutcome: OutcomeThrottled, wantRetry: "2"},
		{name: "server error", faults: Faults{ServerError: 1}, to: "+111111111", wantStatus: 500, wantCode: 131000, wantOutcome: OutcomeError},
		{name: "code probability", faults: Faults{CodeProb: map[int]float64{131026: 1}}, to: "+111111111", wantStatus: 400, wantCode: 131026, wantOutcome: OutcomeError},
		{name: "code probability with status", faults: Faults{CodeProb: map[int]float64{131049: 0, 2: 1}}, to: "+111111111", wantStatus: 503, wantCode: 2, wantOutcome: OutcomeError},
		{name: "fail number", faults: Faults{FailNumbers: map[string]int{"+111111111": 131050}}, to: "+111111111", wantStatus: 400, wantCode: 131050, wantOutcome: OutcomeError},
		{name: "fail number spares others", faults: Faults{FailNumbers: map[string]int{"+111111111": 131050}}, to: "+222222222", wantStatus: 200, wantOutcome: OutcomeAccepted, wantCounted: true},
		{name: "bad template", faults: Faults{BadTemplates: []string{DemoTemplate}}, to: "+111111111", wantStatus: 404, wantCode: 132001, wantOutcome: OutcomeError},
		{name: "bad template spares others", faults: Faults{BadTemplates: []string{"other"}}, to: "+111111111", wantStatus: 200, wantOutcome: OutcomeAccepted, wantCounted: true},
		{name: "drop", faults: Faults{Drop: 1}, to: "+111111111", wantStatus: 0, wantOutcome: OutcomeDropped, wantCounted: true},
		{name: "slow", faults: Faults{Slow: 1, SlowDelay: 50 * time.Millisecond}, to: "+111111111", wantStatus: 200, wantOutcome: OutcomeSlow, wantCounted: true},
		{name: "fatal account", faults: Faults{FatalAccounts: map[string]FatalAccount{"1065": {Code: 190}}}, to: "+111111111", wantStatus: 401, wantCode: 190, wantOutcome: OutcomeError},
		{name: "fatal account spares others", faults: Faults{FatalAccounts: map[string]FatalAccount{"9999": {Code: 190}}}, to: "+111111111", wantStatus: 200, wantOutcome: OutcomeAccepted, wantCounted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts := startServer(t, Options{Faults: tt.faults})
			start := time.Now()
			r := post(t, ts, "1065", demo(tt.to))
			if tt.wantStatus == 0 {
				if r.err == nil {
					t.Fatalf("got HTTP %d, want the connection closed", r.status)
				}
			} else if r.err != nil || r.status != tt.wantStatus || r.graph.Error.Code != tt.wantCode {
				t.Fatalf("HTTP %d code %d err %v, want HTTP %d code %d", r.status, r.graph.Error.Code, r.err, tt.wantStatus, tt.wantCode)
			}
			if got := r.header.Get("Retry-After"); r.err == nil && got != tt.wantRetry {
				t.Errorf("Retry-After %q, want %q", got, tt.wantRetry)
			}
			if tt.faults.Slow > 0 && time.Since(start) < tt.faults.SlowDelay {
				t.Errorf("slow answer came after %v, want ≥ %v", time.Since(start), tt.faults.SlowDelay)
			}
			recs := s.Records()
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			rec := recs[0]
			if rec.Outcome != tt.wantOutcome || rec.Code != tt.wantCode {
				t.Errorf("record %+v, want outcome %s code %d", rec, tt.wantOutcome, tt.wantCode)
			}
			if (rec.WAMID != "") != tt.wantCounted || (s.Accepted()[tt.to] == 1) != tt.wantCounted {
				t.Errorf("record wamid %q, Accepted %v; want counted=%v", rec.WAMID, s.Accepted(), tt.wantCounted)
			}
		})
	}
}

func TestThroughput(t *testing.T) {
	clk := newFakeClock()
	_, ts := startServer(t, Options{Now: clk.Now}) // default 80 msg/s
	n := 0
	sendN := func(phoneNumberID string, count int) (accepted int) {
		for range count {
			n++ // a new recipient each time, so the pair limit stays out of the way
			r := post(t, ts, phoneNumberID, demo(fmt.Sprintf("+1650%07d", n)))
			switch {
			case r.status == 200:
				accepted++
			case r.graph.Error.Code != 130429 || r.status != 400:
				t.Fatalf("HTTP %d code %d, want 200 or 400/130429", r.status, r.graph.Error.Code)
			}
		}
		return accepted
	}
	steps := []struct {
		advance       time.Duration
		phoneNumberID string
		send, want    int
	}{
		{0, "A", 81, 80},                   // a full bucket, then empty
		{13 * time.Millisecond, "A", 2, 1}, // 1/80 s earns one message
		{0, "B", 81, 80},                   // per phone number id
		{500 * time.Millisecond, "A", 50, 40},
		{10 * time.Second, "A", 100, 80}, // capacity is one second's worth
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		if got := sendN(st.phoneNumberID, st.send); got != st.want {
			t.Errorf("step %d: %d of %d accepted, want %d", i, got, st.send, st.want)
		}
	}
}

func TestThroughputOptions(t *testing.T) {
	clk := newFakeClock()
	_, ts := startServer(t, Options{Now: clk.Now, Throughput: 2})
	codes := []int{}
	for i := range 3 {
		codes = append(codes, post(t, ts, "A", demo(fmt.Sprintf("+1650555%04d", i))).status)
	}
	if fmt.Sprint(codes) != "[200 200 400]" {
		t.Errorf("statuses %v, want [200 200 400]", codes)
	}

	_, ts = startServer(t, Options{Now: clk.Now, Throughput: -1})
	for i := range 200 {
		if r := post(t, ts, "A", demo(fmt.Sprintf("+1650555%04d", i))); r.status != 200 {
			t.Fatalf("request %d: HTTP %d with no throughput limit", i, r.status)
		}
	}
}

func TestPairLimit(t *testing.T) {
	clk := newFakeClock()
	s, ts := startServer(t, Options{Now: clk.Now, Faults: Faults{RetryAfter: 4 * time.Second}})
	steps := []struct {
		advance       time.Duration
		phoneNumberID string
		to            string
		wantCode      int
	}{
		{0, "A", "+16505551234", 0},
		{5900 * time.Millisecond, "A", "+16505551234", 131056},
		{0, "A", "+1 (650) 555-1234", 131056}, // the same person, formatted
		{0, "B", "+16505551234", 0},           // another number may send
		{0, "A", "+16505550000", 0},           // another recipient
		{100 * time.Millisecond, "A", "+16505551234", 0},
		{time.Second, "A", "+16505551234", 131056},
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		r := post(t, ts, st.phoneNumberID, demo(st.to))
		if r.graph.Error.Code != st.wantCode {
			t.Fatalf("step %d: HTTP %d code %d, want code %d", i, r.status, r.graph.Error.Code, st.wantCode)
		}
		if st.wantCode != 0 && (r.status != 400 || r.header.Get("Retry-After") != "4") {
			t.Errorf("step %d: HTTP %d Retry-After %q, want 400 and 4", i, r.status, r.header.Get("Retry-After"))
		}
	}
	if got := s.Records()[1].Outcome; got != OutcomePairThrottled {
		t.Errorf("outcome %q, want %q", got, OutcomePairThrottled)
	}

	_, ts = startServer(t, Options{Now: clk.Now, PairInterval: -1})
	for i := range 3 {
		if r := post(t, ts, "A", demo("+16505551234")); r.status != 200 {
			t.Errorf("request %d: HTTP %d with no pair limit", i, r.status)
		}
	}
}

func TestFatalAccountAfter(t *testing.T) {
	clk := newFakeClock()
	s, ts := startServer(t, Options{Now: clk.Now, Faults: Faults{
		FatalAccounts: map[string]FatalAccount{"A": {Code: 190, After: 3}, "C": {Code: 131031, After: 0}},
		CodeProb:      map[int]float64{131026: 0.5},
		Seed:          7,
	}})
	var got []string
	for i := range 12 {
		r := post(t, ts, "A", demo(fmt.Sprintf("+1650555%04d", i)))
		got = append(got, fmt.Sprintf("%d/%d", r.status, r.graph.Error.Code))
	}
	// Failed answers do not count towards After: exactly 3 are accepted.
	accepted := 0
	for _, rec := range s.Records() {
		if rec.WAMID != "" {
			accepted++
		}
	}
	if accepted != 3 {
		t.Errorf("%d accepted for A, want 3 (answers %v)", accepted, got)
	}
	if last := got[len(got)-1]; last != "401/190" {
		t.Errorf("last answer %s, want 401/190 (answers %v)", last, got)
	}
	if r := post(t, ts, "B", demo("+16505559999")); r.status != 200 && r.graph.Error.Code != 131026 {
		t.Errorf("account B: HTTP %d code %d, want it unaffected", r.status, r.graph.Error.Code)
	}
	if r := post(t, ts, "C", demo("+16505559999")); r.status != 403 || r.graph.Error.Code != 131031 {
		t.Errorf("account C: HTTP %d code %d, want 403/131031 from the first message", r.status, r.graph.Error.Code)
	}
}

func TestRecords(t *testing.T) {
	clk := newFakeClock()
	var buf bytes.Buffer
	s, ts := startServer(t, Options{Now: clk.Now, Record: &buf, Faults: Faults{FailNumbers: map[string]int{"+2222222222": 131026}}})
	post(t, ts, "A", demo("+1111111111"))
	clk.Advance(time.Second)
	post(t, ts, "A", demo("+2222222222"))
	do(t, "POST", ts.URL+"/v25.0/A/messages", "", demo("+3333333333"))

	want := []Record{
		{At: clk.Now().Add(-time.Second), PhoneNumberID: "A", To: "+1111111111", Template: DemoTemplate, CallbackData: "wasend:c1:+1111111111", HTTPStatus: 200, Outcome: OutcomeAccepted},
		{At: clk.Now(), PhoneNumberID: "A", To: "+2222222222", Template: DemoTemplate, CallbackData: "wasend:c1:+2222222222", HTTPStatus: 400, Code: 131026, Outcome: OutcomeError},
		{At: clk.Now(), PhoneNumberID: "A", To: "+3333333333", Template: DemoTemplate, CallbackData: "wasend:c1:+3333333333", HTTPStatus: 401, Code: 190, Outcome: OutcomeError},
	}
	got := s.Records()
	if len(got) != len(want) || got[0].WAMID == "" {
		t.Fatalf("Records = %+v", got)
	}
	want[0].WAMID = got[0].WAMID
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	// The JSON lines and the HTTP endpoint carry the same records.
	var lines []Record
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	resp, err := http.Get(ts.URL + RecordsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var served []Record
	if err := json.NewDecoder(resp.Body).Decode(&served); err != nil {
		t.Fatal(err)
	}
	for name, rs := range map[string][]Record{"record lines": lines, RecordsPath: served} {
		if len(rs) != len(want) {
			t.Fatalf("%s: %d records, want %d", name, len(rs), len(want))
		}
		for i := range want {
			if !rs[i].At.Equal(want[i].At) || rs[i].Outcome != want[i].Outcome || rs[i].WAMID != want[i].WAMID || rs[i].Code != want[i].Code {
				t.Errorf("%s %d: %+v, want %+v", name, i, rs[i], want[i])
			}
		}
	}
}

func TestRecordsEmptyIsArray(t *testing.T) {
	_, ts := startServer(t, Options{})
	resp, err := http.Get(ts.URL + RecordsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("body %q, want []", b)
	}
}

func TestSeedReplays(t *testing.T) {
	run := func(seed int64) string {
		clk := newFakeClock()
		s := New(Options{Now: clk.Now, Throughput: -1, Faults: Faults{
			Seed: seed, Throttle: 0.2, ServerError: 0.2, CodeProb: map[int]float64{131026: 0.2, 131049: 0.2},
		}})
		for i := range 60 {
			w := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/v25.0/A/messages", strings.NewReader(demo(fmt.Sprintf("+1650555%04d", i))))
			req.Header.Set("Authorization", "Bearer "+token)
			s.ServeHTTP(w, req)
		}
		var b strings.Builder
		for _, r := range s.Records() {
			fmt.Fprintf(&b, "%d ", r.Code)
		}
		return b.String()
	}
	a, b, c := run(42), run(42), run(43)
	if a != b {
		t.Errorf("seed 42 did not replay:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 gave the same run: %s", a)
	}
	for _, code := range []string{"0 ", "130429 ", "131000 ", "131026 ", "131049 "} {
		if !strings.Contains(a, code) {
			t.Errorf("run %s never answered %s", a, code)
		}
	}
}

func TestConcurrent(t *testing.T) {
	clk := newFakeClock() // frozen: exactly one bucket's worth is accepted
	var buf safeBuffer
	s, ts := startServer(t, Options{Now: clk.Now, Record: &buf, Faults: Faults{Seed: 1, ServerError: 0.1}})
	const workers, each = 20, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := post(t, ts, "A", demo(fmt.Sprintf("+1650%03d%04d", w, i)))
				if r.err != nil {
					t.Error(r.err)
				}
			}
		})
	}
	// Readers race with writers.
	wg.Go(func() {
		for range 50 {
			s.Records()
			s.Accepted()
		}
	})
	wg.Wait()

	recs := s.Records()
	if len(recs) != workers*each {
		t.Fatalf("%d records, want %d", len(recs), workers*each)
	}
	wamids := map[string]bool{}
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.Outcome]++
		if r.WAMID != "" {
			if wamids[r.WAMID] {
				t.Errorf("duplicate wamid %s", r.WAMID)
			}
			wamids[r.WAMID] = true
		}
	}
	// The bucket spends a token before the fault draw, so errors take
	// tokens too: accepted + server errors = 80.
	if counts[OutcomeAccepted]+counts[OutcomeError] != 80 || counts[OutcomeThrottled] != workers*each-80 {
		t.Errorf("outcomes %v, want accepted+error = 80", counts)
	}
	total := 0
	for _, n := range s.Accepted() {
		total += n
	}
	if total != counts[OutcomeAccepted] {
		t.Errorf("Accepted sums to %d, want %d", total, counts[OutcomeAccepted])
	}
	if lines := strings.Count(buf.String(), "\n"); lines != workers*each {
		t.Errorf("%d record lines, want %d", lines, workers*each)
	}
}

// safeBuffer lets the test read what the server wrote under its lock.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestUnknownPhoneNumberID: sending from an id in UnknownNumbers answers
// as Meta does for an id it does not know: HTTP 400, code 100, subcode 33.
func TestUnknownPhoneNumberID(t *testing.T) {
	s, ts := startServer(t, Options{Faults: Faults{UnknownNumbers: []string{"1009"}}})
	if r := post(t, ts, "1001", demo("+16505550001")); r.status != 200 {
		t.Errorf("known id: HTTP %d code %d, want 200", r.status, r.graph.Error.Code)
	}
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/v25.0/1009/messages", strings.NewReader(demo("+16505550002")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body graphErrorWithSubcode
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	e := body.Error
	if resp.StatusCode != 400 || e.Code != 100 || e.Subcode != 33 || e.Type != "GraphMethodException" ||
		!strings.HasPrefix(e.Message, "Unsupported post request. Object with ID '1009' does not exist") {
		t.Errorf("unknown id: HTTP %d %+v, want 400, code 100, subcode 33, Meta's message", resp.StatusCode, e)
	}
	if recs := s.Records(); len(recs) != 2 || recs[1].Code != 100 || recs[1].Outcome != OutcomeError {
		t.Errorf("records %+v, want the second an error 100", recs)
	}
}

// TestLatency: every answer waits out its delay, drawn within base ±
// jitter from its own source, and the fault draws stay those of the seed.
func TestLatency(t *testing.T) {
	const base, jitter = 40 * time.Millisecond, 20 * time.Millisecond
	faults := Faults{Seed: 7, ServerError: 0.3}
	plain := New(Options{Throughput: -1, PairInterval: -1, Faults: faults})
	slow, ts := startServer(t, Options{Throughput: -1, PairInterval: -1, Faults: faults, Latency: Latency{Base: base, Jitter: jitter}})
	var lo, hi time.Duration = time.Hour, 0
	for i := range 40 {
		to := fmt.Sprintf("+1650555%04d", i)
		a := slow.decide("A", token, inMessage{To: to}, nil, false)
		lo, hi = min(lo, a.delay), max(hi, a.delay)
		if p := plain.decide("A", token, inMessage{To: to}, nil, false); p.code != a.code {
			t.Fatalf("request %d: code %d with latency, %d without: latency changed the fault draws", i, a.code, p.code)
		}
	}
	if lo < base-jitter || hi > base+jitter || hi-lo < jitter {
		t.Errorf("delays in [%v, %v], want spread within [%v, %v]", lo, hi, base-jitter, base+jitter)
	}

	start := time.Now()
	req, _ := http.NewRequest("POST", ts.URL+"/v25.0/A/messages", strings.NewReader(demo("+16505559999")))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); took < base-jitter {
		t.Errorf("answered after %v, before the least delay %v", took, base-jitter)
	}
}
