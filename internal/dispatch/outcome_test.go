package dispatch_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
)

type row struct {
	phone     string
	state     campaign.State
	attempts  int
	retries   int
	errorCode sql.NullInt64
	errorMsg  sql.NullString
}

func (e *env) rows() map[string]row {
	e.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(`SELECT phone, state, attempts, retries, error_code, error_message FROM messages`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]row{}
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.phone, &r.state, &r.attempts, &r.retries, &r.errorCode, &r.errorMsg); err != nil {
			e.t.Fatal(err)
		}
		out[r.phone] = r
	}
	return out
}

// attemptClasses counts the attempts of every row by class.
func (e *env) attemptClasses() map[string]int {
	e.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(`SELECT coalesce(class, ''), count(*) FROM attempts GROUP BY 1`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]int{}
	for rs.Next() {
		var class string
		var n int
		if err := rs.Scan(&class, &n); err != nil {
			e.t.Fatal(err)
		}
		out[class] = n
	}
	if err := rs.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) usedToday(name string) int {
	e.t.Helper()
	a, err := e.st.Account(e.ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.UsedToday
}

const first = "+4915110000000" // the first number importN writes

func TestOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		faults sandbox.Faults
		check  func(t *testing.T, e *env, rows map[string]row)
	}{
		{
			name:   "permanent error fails the row with its code and gives the quota back",
			faults: sandbox.Faults{FailNumbers: map[string]int{first: 131026}},
			check: func(t *testing.T, e *env, rows map[string]row) {
				r := rows[first]
				if r.state != campaign.Failed || r.errorCode.Int64 != 131026 || r.attempts != 1 {
					t.Errorf("row %+v: want failed with 131026 after 1 attempt", r)
				}
				if got := e.usedToday("a"); got != 19 {
					t.Errorf("used today %d, want 19 (the failed send refunded)", got)
				}
			},
		},
		{
			name:   "transient error retries, then fails after max attempts",
			faults: sandbox.Faults{FailNumbers: map[string]int{first: 131000}},
			check: func(t *testing.T, e *env, rows map[string]row) {
				r := rows[first]
				if r.state != campaign.Failed || r.attempts != 3 || r.retries != 2 {
					t.Errorf("row %+v: want failed after 3 attempts, 2 retries", r)
				}
				if !strings.Contains(r.errorMsg.String, "gave up after 3 attempts") {
					t.Errorf("error %q does not say it gave up", r.errorMsg.String)
				}
			},
		},
		{
			name:   "throttling is retried without spending the retry budget",
			faults: sandbox.Faults{Throttle: 0.4, Seed: 7},
			check: func(t *testing.T, e *env, rows map[string]row) {
				retried := 0
				for _, r := range rows {
					if r.state != campaign.Sent || r.retries != 0 {
						t.Errorf("row %+v: want sent with no retry spent", r)
					}
					if r.attempts > 1 {
						retried++
					}
				}
				if retried == 0 {
					t.Error("no row was throttled: the test proves nothing")
				}
				if got := e.usedToday("a"); got != 20 {
					t.Errorf("used today %d, want 20: throttled sends are refunded", got)
				}
			},
		},
		{
			name:   "a dropped connection after the request was written is unknown",
			faults: sandbox.Faults{Drop: 1},
			check: func(t *testing.T, e *env, rows map[string]row) {
				for _, r := range rows {
					if r.state != campaign.Unknown || r.attempts != 1 {
						t.Errorf("row %+v: want unknown after 1 attempt", r)
					}
				}
				if got := len(e.box.Accepted()); got != 20 {
					t.Errorf("server accepted %d, want 20", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), tt.faults)
			e.addAccount("a", "1001", campaign.TierActive)
			c := e.importN(20)
			eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2, MaxAttempts: 3}, Rand: func() float64 { return 0.5 }})
			if err := eng.Run(e.ctx); err != nil {
				t.Fatal(err)
			}
			tt.check(t, e, e.rows())
		})
	}
}

// TestBackoffDelays checks full-jitter exponential backoff on the simulated
// clock: with the jitter draw fixed at 0.5, retry n waits half of
// min(max, base·2^n).
func TestBackoffDelays(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{FailNumbers: map[string]int{first: 131016}})
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(1)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 1, MaxAttempts: 5, BackoffBase: time.Second, BackoffMax: 3 * time.Second},
		Rand: func() float64 { return 0.5 }})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	times := e.claims()["a"]
	want := []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond}
	if len(times) != len(want)+1 {
		t.Fatalf("%d attempts, want %d", len(times), len(want)+1)
	}
	for i, w := range want {
		if got := times[i+1].Sub(times[i]); got != w {
			t.Errorf("retry %d after %v, want %v", i+1, got, w)
		}
	}
}

// TestStopWhenCapped: with every account at its cap the engine stops with
// ErrCapped and leaves the rest pending.
func TestStopWhenCapped(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	e.addAccount("a", "1001", campaign.TierNew) // 50 a day
	c := e.importN(60)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{StopWhenCapped: true}})
	if err := eng.Run(e.ctx); !errors.Is(err, dispatch.ErrCapped) {
		t.Fatalf("Run: %v, want ErrCapped", err)
	}
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != 50 || counts[campaign.Pending] != 10 {
		t.Errorf("counts %v, want 50 sent and 10 pending", counts)
	}
}

// TestCancelDrainsInFlight: after a cancel, requests already made finish
// and are recorded; nothing is left in 'sending'.
func TestCancelDrainsInFlight(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC),
		sandbox.Faults{Slow: 1, SlowDelay: 300 * time.Millisecond})
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(40)
	ctx, cancel := context.WithCancel(e.ctx)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 4}, Observe: func(ev dispatch.Event) {
		if ev.Kind == dispatch.EventSent {
			cancel()
		}
	}})
	if err := eng.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sending] != 0 {
		t.Errorf("%d rows left sending after the drain", counts[campaign.Sending])
	}
	if counts[campaign.Sent] < 2 || counts[campaign.Pending] == 0 {
		t.Errorf("counts %v: want the in-flight requests sent and the rest pending", counts)
	}
	if got := len(e.box.Accepted()); got != counts[campaign.Sent] {
		t.Errorf("server accepted %d, wasend recorded %d sent", got, counts[campaign.Sent])
	}
}
