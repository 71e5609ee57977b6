package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr []string // substrings, in order; nil means stderr must be empty
	}{
		{name: "nil", err: nil, wantCode: ExitOK},
		{
			name:       "usage",
			err:        usagef("--tier %q: must be one of new, warm, active", "gold"),
			wantCode:   ExitUsage,
			wantStderr: []string{`error: --tier "gold": must be one of new, warm, active`, "--help"},
		},
		{
			name:       "usage wrapped",
			err:        fmt.Errorf("account add: %w", usageError{errors.New("bad flag")}),
			wantCode:   ExitUsage,
			wantStderr: []string{"error: account add: bad flag", "--help"},
		},
		{name: "canceled", err: context.Canceled, wantCode: ExitInterrupted},
		{name: "canceled wrapped", err: fmt.Errorf("send campaign 3: %w", context.Canceled), wantCode: ExitInterrupted},
		{
			name:       "capped wrapped",
			err:        fmt.Errorf("campaign 3: %w", dispatch.ErrCapped),
			wantCode:   ExitCapped,
			wantStderr: []string{"stopped: campaign 3: every account reached its daily cap"},
		},
		{
			name:       "paused wrapped",
			err:        fmt.Errorf("campaign 3: %w: template rejected", campaign.ErrPaused),
			wantCode:   ExitPaused,
			wantStderr: []string{"stopped: campaign 3: "},
		},
		{
			name:       "no usable account: paused, but its own code",
			err:        fmt.Errorf("%w: %w", campaign.ErrPaused, campaign.ErrNoUsableAccount),
			wantCode:   ExitNoAccount,
			wantStderr: []string{"stopped: campaign is paused: no usable account"},
		},
		{
			name:       "cancelled wrapped",
			err:        fmt.Errorf("campaign 3: %w on 2026-12-01 02:00:00 UTC; a cancelled campaign is final", campaign.ErrCancelled),
			wantCode:   ExitCancelled,
			wantStderr: []string{"stopped: campaign 3: campaign was cancelled"},
		},
		{
			name:       "unknown command",
			err:        errors.New(`unknown command "bogus" for "wasend"`),
			wantCode:   ExitUsage,
			wantStderr: []string{"--help"},
		},
		{
			name:       "other",
			err:        errors.New("open /x/wasend.db: permission denied"),
			wantCode:   ExitError,
			wantStderr: []string{"error: open /x/wasend.db: permission denied\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := exitCode(tt.err, &stderr); got != tt.wantCode {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.wantCode)
			}
			got := stderr.String()
			if tt.wantStderr == nil {
				if got != "" {
					t.Errorf("stderr = %q, want nothing", got)
				}
				return
			}
			rest := got
			for _, want := range tt.wantStderr {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Errorf("stderr = %q, want it to contain %q (in order)", got, want)
					break
				}
				rest = rest[i+len(want):]
			}
			if tt.wantCode == ExitError && !strings.HasPrefix(got, "error: ") {
				t.Errorf("stderr = %q, want the prefix %q", got, "error: ")
			}
		})
	}
}
