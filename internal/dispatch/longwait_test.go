package dispatch_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestLongWaitEndsTheRun: a row a status webhook rescheduled a day later
// (131049) does not keep a run waiting with LongWait; without it the
// engine waits and sends it then.
func TestLongWaitEndsTheRun(t *testing.T) {
	for _, tt := range []struct {
		name     string
		longWait time.Duration
		wantErr  error
		wantSent int
	}{
		{name: "ends with LongWait", longWait: 12 * time.Hour, wantErr: dispatch.ErrRescheduled, wantSent: 2},
		{name: "waits without", longWait: 0, wantErr: nil, wantSent: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			e := newEnv(t, start, sandbox.Faults{})
			e.addAccount("a", "1001", campaign.TierActive)
			c := e.importN(3)
			db, err := sql.Open("sqlite3", "file:"+e.path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.Exec(`UPDATE messages SET next_attempt_at = ?, error_code = 131049 WHERE id = (SELECT min(id) FROM messages)`,
				start.Add(24*time.Hour).UnixNano())
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			err = e.engine(c, dispatch.Options{Policy: dispatch.Policy{LongWait: tt.longWait}, Poll: 6 * time.Hour}).Run(e.ctx)
			if !errors.Is(err, tt.wantErr) || (err != nil && !strings.Contains(err.Error(), "2026-03-03T09:00:00Z")) {
				t.Fatalf("Run: %v, want %v naming when", err, tt.wantErr)
			}
			counts, err := e.st.Counts(e.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if counts[campaign.Sent] != tt.wantSent {
				t.Errorf("counts %v, want %d sent", counts, tt.wantSent)
			}
		})
	}
}
