package dispatch_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/dispatch"
)

func TestPolicyWithDefaults(t *testing.T) {
	d := dispatch.DefaultPolicy()
	off := d
	off.ErrorPauseRatio = 0
	tests := []struct {
		name string
		in   dispatch.Policy
		want dispatch.Policy
	}{
		// A zero ratio is off, not unset: the engine keeps it.
		{"zero", dispatch.Policy{}, off},
		{"negative durations and counts", dispatch.Policy{Workers: -1, MaxAttempts: -1, BackoffBase: -time.Second,
			Cooldown: -1, Restriction: -1, OutageTimeout: -1, ErrorPauseRatio: 0.2}, d},
		{"set fields are kept", dispatch.Policy{Workers: 160, StopWhenCapped: true, MaxAttempts: 2, BackoffBase: time.Millisecond,
			BackoffMax: time.Second, Cooldown: time.Minute, Restriction: time.Hour, ErrorPauseRatio: 0.5, OutageTimeout: time.Minute},
			dispatch.Policy{Workers: 160, StopWhenCapped: true, MaxAttempts: 2, BackoffBase: time.Millisecond,
				BackoffMax: time.Second, Cooldown: time.Minute, Restriction: time.Hour, ErrorPauseRatio: 0.5, OutageTimeout: time.Minute}},
	}
	for _, tc := range tests {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%s: WithDefaults() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, r := range []float64{-0.1, 1.01} {
		if err := (dispatch.Policy{ErrorPauseRatio: r}).Validate(); err == nil {
			t.Errorf("ratio %v: no error", r)
		}
	}
	for _, r := range []float64{0, 0.2, 1} {
		if err := (dispatch.Policy{ErrorPauseRatio: r}).Validate(); err != nil {
			t.Errorf("ratio %v: %v", r, err)
		}
	}
}
