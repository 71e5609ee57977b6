package testproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

func TestBaseEnvDropsWhatPointsWasendElsewhere(t *testing.T) {
	t.Setenv("WASEND_DB", "/elsewhere.db")
	t.Setenv("WASEND_API_BASE", "https://graph.facebook.com")
	t.Setenv("XDG_DATA_HOME", "/elsewhere")
	t.Setenv("WA_TOKEN_KEPT", "x")
	env := BaseEnv()
	for _, kv := range env {
		if strings.HasPrefix(kv, "WASEND_") || strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			t.Errorf("BaseEnv keeps %q", kv)
		}
	}
	if !slices.Contains(env, "WA_TOKEN_KEPT=x") {
		t.Error("BaseEnv dropped WA_TOKEN_KEPT, which is not wasend's")
	}
}

func TestRecordsLeavesAHalfWrittenLine(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string // To of each record
	}{
		{name: "no file yet", want: nil},
		{name: "empty", data: "", want: nil},
		{name: "only a partial line", data: `{"to":"+491`, want: nil},
		{
			name: "two lines and a partial one",
			data: `{"to":"+4915112340000","outcome":"accepted"}` + "\n" + `{"to":"+4915112340001","outcome":"throttled"}` + "\n" + `{"to":"+49151`,
			want: []string{"+4915112340000", "+4915112340001"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Sandbox{Record: filepath.Join(t.TempDir(), "sandbox.jsonl")}
			if tt.name != "no file yet" {
				if err := os.WriteFile(s.Record, []byte(tt.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, r := range s.Records(t) {
				got = append(got, r.To)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Records() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAcceptedCountsWhatTheServerTook(t *testing.T) {
	recs := []sandbox.Record{
		{To: "+1", Outcome: sandbox.OutcomeAccepted},
		{To: "+1", Outcome: sandbox.OutcomeSlow}, // a second delivery to +1
		{To: "+2", Outcome: sandbox.OutcomeThrottled},
		{To: "+3", Outcome: sandbox.OutcomeDropped},
		{To: "+4", Outcome: sandbox.OutcomeError},
	}
	got := Accepted(recs)
	want := map[string]int{"+1": 2, "+3": 1}
	if len(got) != len(want) {
		t.Fatalf("Accepted() has %d recipients, want %d: %v", len(got), len(want), got)
	}
	for to, n := range want {
		if len(got[to]) != n {
			t.Errorf("Accepted()[%s] has %d records, want %d", to, len(got[to]), n)
		}
	}
}

func TestSpansPerCampaign(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1_700_000_000+int64(s), 0) }
	recs := []sandbox.Record{
		{CallbackData: "wasend:c1:m1", At: at(1)},
		{CallbackData: "wasend:c2:m7", At: at(2)},
		{CallbackData: "wasend:c1:m2", At: at(3)},
		{CallbackData: "wasend:c1:m3", At: at(5)},
		{CallbackData: "wasend:c2:m8", At: at(8)},
	}
	first, last := Spans(recs)
	want := map[string][2]time.Time{"c1": {at(1), at(5)}, "c2": {at(2), at(8)}}
	if len(first) != len(want) || len(last) != len(want) {
		t.Fatalf("Spans() = %v, %v; want campaigns c1 and c2", first, last)
	}
	for c, w := range want {
		if !first[c].Equal(w[0]) || !last[c].Equal(w[1]) {
			t.Errorf("campaign %s: %v to %v, want %v to %v", c, first[c], last[c], w[0], w[1])
		}
	}
}

func TestResultStringKeepsTheEndOfLongOutput(t *testing.T) {
	long := strings.Repeat("x", 5000) + "THE END"
	s := Result{Code: 1, Stderr: long}.String()
	if !strings.Contains(s, "exit 1") || !strings.Contains(s, "THE END") {
		t.Errorf("String() lost the exit code or the end of stderr:\n%.200s", s)
	}
	if len(s) > 4200 {
		t.Errorf("String() is %d bytes; long output should be cut to its end", len(s))
	}
}

// A process can end between a test's look and its signal (a host that
// finished its rows as the torture stopped it): signalling it then is not
// a failure.
func TestSignalAfterTheEnd(t *testing.T) {
	p := &Proc{done: make(chan struct{})}
	p.cmd = exec.Command("true")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	<-p.Done()
	p.Signal(t, syscall.SIGSTOP)
	p.Signal(t, syscall.SIGCONT)
	if !p.Exited() {
		t.Error("the process should have ended")
	}
}
