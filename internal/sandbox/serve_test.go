package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/whatsapp"
)

// TestWithClient drives the sandbox with the real client: what the sandbox
// answers must classify the way the Cloud API's answers do.
func TestWithClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	opts := Options{Faults: Faults{
		FailNumbers:   map[string]int{"+15550000001": 131026, "+15550000002": 130429, "+15550000003": 131000},
		CodeProb:      map[int]float64{},
		FatalAccounts: map[string]FatalAccount{"fatal": {Code: 190}},
		BadTemplates:  []string{"paused_one"},
	}}
	go func() { done <- ListenAndServe(ctx, "127.0.0.1:0", opts, func(addr string) { addrc <- addr }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	c := whatsapp.New(whatsapp.Config{BaseURL: "http://" + addr, Timeout: 2 * time.Second})

	tests := []struct {
		name          string
		phoneNumberID string
		to            string
		template      string
		want          whatsapp.Class
	}{
		{"accepted", "A", "+15551230000", DemoTemplate, whatsapp.ClassOK},
		{"pair limit", "A", "+15551230000", DemoTemplate, whatsapp.ClassPairThrottled},
		{"undeliverable", "A", "+15550000001", DemoTemplate, whatsapp.ClassPermanent},
		{"throttled", "A", "+15550000002", DemoTemplate, whatsapp.ClassThrottled},
		{"server error", "A", "+15550000003", DemoTemplate, whatsapp.ClassTransient},
		{"bad template", "A", "+15551230001", "paused_one", whatsapp.ClassCampaignFatal},
		{"bad token", "fatal", "+15551230002", DemoTemplate, whatsapp.ClassAccountFatal},
	}
	for _, tt := range tests {
		resp, err := c.Send(ctx, whatsapp.Request{PhoneNumberID: tt.phoneNumberID, Token: token, To: tt.to,
			Template: &whatsapp.Template{Name: tt.template, Lang: "en", BodyParams: []string{"Ana", "42"}}})
		if got := whatsapp.Classify(err); got != tt.want {
			t.Errorf("%s: Classify(%v) = %v, want %v", tt.name, err, got, tt.want)
		}
		if err == nil && (!strings.HasPrefix(resp.WAMID, "wamid.") || resp.WaID != "15551230000") {
			t.Errorf("%s: response %+v", tt.name, resp)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
}

func TestAmbiguousFaultsWithClient(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
	}{
		{"drop", Faults{Drop: 1}},
		{"slow", Faults{Slow: 1, SlowDelay: 5 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts := startServer(t, Options{Faults: tt.faults})
			c := whatsapp.New(whatsapp.Config{BaseURL: ts.URL, Timeout: 200 * time.Millisecond})
			_, err := c.Send(context.Background(), whatsapp.Request{PhoneNumberID: "A", Token: token, To: "+15551230000", Text: "hi"})
			if got := whatsapp.Classify(err); got != whatsapp.ClassAmbiguous {
				t.Errorf("Classify(%v) = %v, want ambiguous", err, got)
			}
			// The sandbox accepted it: resending would be a duplicate.
			if n := s.Accepted()["+15551230000"]; n != 1 {
				t.Errorf("Accepted = %d, want 1", n)
			}
		})
	}
}

// TestServeCutsSlowAnswers checks that shutdown does not wait for a slow
// answer, and that the client sees no fake success.
func TestServeCutsSlowAnswers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, "127.0.0.1:0", Options{Faults: Faults{Slow: 1, SlowDelay: time.Minute}}, func(a string) { addrc <- a })
	}()
	addr := <-addrc
	sent := make(chan error, 1)
	go func() {
		c := whatsapp.New(whatsapp.Config{BaseURL: "http://" + addr, Timeout: time.Minute})
		_, err := c.Send(context.Background(), whatsapp.Request{PhoneNumberID: "A", Token: token, To: "+15551230000", Text: "hi"})
		sent <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the request arrive
	start := time.Now()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if err := <-sent; whatsapp.Classify(err) != whatsapp.ClassAmbiguous {
		t.Errorf("client got %v, want an ambiguous error", err)
	}
}

func TestListenAndServeErrors(t *testing.T) {
	err := ListenAndServe(context.Background(), "127.0.0.1:0", Options{Faults: Faults{Drop: 2}}, nil)
	if err == nil || !strings.Contains(err.Error(), "drop probability") {
		t.Errorf("invalid options: err = %v", err)
	}
	err = ListenAndServe(context.Background(), "256.0.0.1:http", Options{}, nil)
	if err == nil {
		t.Error("bad address: no error")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"zero", Options{}, ""},
		{"all set", Options{Throughput: 20, Faults: Faults{Throttle: 1, Drop: 0.5, CodeProb: map[int]float64{131026: 0},
			FailNumbers: map[string]int{"+1650": 131026}, FatalAccounts: map[string]FatalAccount{"1": {190, 5}}}}, ""},
		{"negative probability", Options{Faults: Faults{Slow: -0.1}}, "slow probability"},
		{"probability over one", Options{Faults: Faults{ServerError: 1.5}}, "server error probability"},
		{"code probability", Options{Faults: Faults{CodeProb: map[int]float64{131026: 3}}}, "code 131026"},
		{"negative slow delay", Options{Faults: Faults{SlowDelay: -time.Second}}, "slow delay"},
		{"negative after", Options{Faults: Faults{FatalAccounts: map[string]FatalAccount{"1": {190, -1}}}}, "after -1"},
		{"bad fail number", Options{Faults: Faults{FailNumbers: map[string]int{"abc": 1}}}, "fail number"},
		{"latency", Options{Latency: Latency{Base: time.Second, Jitter: time.Second}}, ""},
		{"jitter over the latency", Options{Latency: Latency{Base: time.Second, Jitter: 2 * time.Second}}, "latency 1s±2s"},
		{"negative latency", Options{Latency: Latency{Base: -time.Second}}, "latency -1s"},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestParseFlags(t *testing.T) {
	t.Run("fail number", func(t *testing.T) {
		tests := []struct {
			in       string
			wantNum  string
			wantCode int
			wantErr  bool
		}{
			{"+16505551234=131026", "+16505551234", 131026, false},
			{" +16505551234 = 131050", "+16505551234", 131050, false},
			{"+16505551234", "", 0, true},
			{"=131026", "", 0, true},
			{"+16505551234=abc", "", 0, true},
			{"+16505551234=-1", "", 0, true},
		}
		for _, tt := range tests {
			num, code, err := ParseFailNumber(tt.in)
			if (err != nil) != tt.wantErr || num != tt.wantNum || code != tt.wantCode {
				t.Errorf("ParseFailNumber(%q) = %q, %d, %v", tt.in, num, code, err)
			}
		}
	})
	t.Run("fatal account", func(t *testing.T) {
		tests := []struct {
			in      string
			wantID  string
			want    FatalAccount
			wantErr bool
		}{
			{"1065=190", "1065", FatalAccount{Code: 190}, false},
			{"1065=190@100", "1065", FatalAccount{Code: 190, After: 100}, false},
			{"1065=0@0", "1065", FatalAccount{Code: 0, After: 0}, false},
			{"1065", "", FatalAccount{}, true},
			{"=190", "", FatalAccount{}, true},
			{"1065=@5", "", FatalAccount{}, true},
			{"1065=190@", "", FatalAccount{}, true},
			{"1065=190@-2", "", FatalAccount{}, true},
		}
		for _, tt := range tests {
			id, fa, err := ParseFatalAccount(tt.in)
			if (err != nil) != tt.wantErr || id != tt.wantID || fa != tt.want {
				t.Errorf("ParseFatalAccount(%q) = %q, %+v, %v", tt.in, id, fa, err)
			}
		}
	})
	t.Run("code probability", func(t *testing.T) {
		tests := []struct {
			in       string
			wantCode int
			wantP    float64
			wantErr  bool
		}{
			{"131026=0.05", 131026, 0.05, false},
			{"2=1", 2, 1, false},
			{"131026", 0, 0, true},
			{"131026=1.1", 0, 0, true},
			{"131026=NaN", 0, 0, true},
			{"x=0.1", 0, 0, true},
		}
		for _, tt := range tests {
			code, p, err := ParseCodeProb(tt.in)
			if (err != nil) != tt.wantErr || code != tt.wantCode || p != tt.wantP {
				t.Errorf("ParseCodeProb(%q) = %d, %v, %v", tt.in, code, p, err)
			}
		}
	})
}

func TestParseLatency(t *testing.T) {
	tests := []struct {
		in      string
		want    Latency
		wantErr bool
	}{
		{"0s", Latency{}, false},
		{"200ms", Latency{Base: 200 * time.Millisecond}, false},
		{"200ms±50ms", Latency{Base: 200 * time.Millisecond, Jitter: 50 * time.Millisecond}, false},
		{" 2s +- 1s ", Latency{Base: 2 * time.Second, Jitter: time.Second}, false},
		{"200ms±200ms", Latency{Base: 200 * time.Millisecond, Jitter: 200 * time.Millisecond}, false},
		{"200", Latency{}, true},
		{"-1s", Latency{}, true},
		{"200ms±", Latency{}, true},
		{"±50ms", Latency{}, true},
		{"200ms±300ms", Latency{}, true},
		{"200ms±-5ms", Latency{}, true},
	}
	for _, tt := range tests {
		got, err := ParseLatency(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLatency(%q) = %+v, %v", tt.in, got, err)
		}
		if err == nil {
			if back, err := ParseLatency(got.String()); err != nil || back != got {
				t.Errorf("ParseLatency(%q) = %+v, %v: does not read back", got.String(), back, err)
			}
		}
	}
}
