package cmd

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/dispatch"
)

// TestSendFlagsFillPolicy: the sending flags start at dispatch's defaults
// and fill the one policy value that travels to the engine.
func TestSendFlagsFillPolicy(t *testing.T) {
	tests := []struct {
		args []string
		want func(p *dispatch.Policy)
	}{
		{nil, func(*dispatch.Policy) {}},
		{[]string{"--workers", "160", "--max-attempts", "2", "--backoff-base", "2s", "--backoff-max", "10s",
			"--cooldown", "1m", "--restriction-pause", "1h", "--error-pause-ratio", "0", "--outage-timeout", "5m",
			"--stop-when-capped"}, func(p *dispatch.Policy) {
			*p = dispatch.Policy{Workers: 160, MaxAttempts: 2, BackoffBase: 2 * time.Second, BackoffMax: 10 * time.Second,
				Cooldown: time.Minute, Restriction: time.Hour, ErrorPauseRatio: 0, OutageTimeout: 5 * time.Minute,
				StopWhenCapped: true}
		}},
	}
	for _, tc := range tests {
		var o runOptions
		cmd := &cobra.Command{}
		addSendFlags(cmd, &o)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		want := dispatch.DefaultPolicy()
		tc.want(&want)
		if o.Policy != want {
			t.Errorf("%v: policy %+v, want %+v", tc.args, o.Policy, want)
		}
	}
}
