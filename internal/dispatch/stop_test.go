package dispatch_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/claim"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/whatsapp"
)

// A pause or cancel made from elsewhere reaches an engine whose every slot
// waits on a slow request — the claim loop can't ask the ledger then — by
// its heartbeat: the claims it had queued go back unsent, the requests
// already made finish and are recorded, and Run ends with the state's
// error. Without the heartbeat's look, the queued claims would be sent
// after the pause.
func TestEngineSeesStopWhileBlocked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stop    func(*store.Store, int64) error
		wantErr error
	}{
		{"pause", func(st *store.Store, id int64) error {
			_, err := st.PauseCampaign(context.Background(), id, campaign.PausedByOperator)
			return err
		}, campaign.ErrPaused},
		{"cancel", func(st *store.Store, id int64) error {
			_, err := st.CancelCampaign(context.Background(), id)
			return err
		}, campaign.ErrCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
			if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1000, Burst: 100, DailyCap: 100000}); err != nil {
				t.Fatal(err)
			}
			e.addAccount("a", "100000000000001", campaign.TierActive)
			c := e.importN(20)

			// The API accepts the first request (the engine sends it
			// alone) and holds every other until released.
			release := make(chan struct{})
			var arrived, answered atomic.Int32
			box := sandbox.New(sandbox.Options{Now: e.clock.Now})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if arrived.Add(1) > 1 {
					<-release
				}
				box.ServeHTTP(w, r)
				answered.Add(1)
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			const workers = 2
			// Not e.engine: its sender goes to the env's sandbox directly.
			eng, err := dispatch.New(dispatch.Options{Campaign: c, Ledger: claim.New(e.st), Clock: e.clock, Policy: dispatch.Policy{Workers: workers},
				Heartbeat: 5 * time.Millisecond, Runner: campaign.Runner{ID: "sim", Host: "test", PID: 1},
				Sender: whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 30 * time.Second}),
				Token:  func(string) (string, error) { return "test-token", nil }})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- eng.Run(e.ctx) }()

			waitUntil(t, "every worker waiting on a request", func() bool { return arrived.Load() == 1+workers })
			waitUntil(t, "a pool of claims queued", func() bool { return countAttempts(t, e.path) == 1+2*workers })
			if err := tt.stop(e.st, c.ID); err != nil {
				t.Fatal(err)
			}
			// Two heartbeats after the stop: the first may have read the
			// ledger before it, the second ran its look after.
			waitBeats(t, e, 2)
			close(release)

			select {
			case err := <-done:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Run = %v, want %v", err, tt.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run still going 10 s after the stop")
			}
			if got := arrived.Load(); got != 1+workers {
				t.Errorf("%d requests reached the API, want only the first and the %d in flight at the stop", got, workers)
			}
			n, err := e.st.Counts(e.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n[campaign.Sent] != 1+workers || n[campaign.Sending] != 0 || n[campaign.Pending] != 20-1-workers {
				t.Errorf("counts %v: want the first and the %d in flight sent, the rest pending", n, workers)
			}
		})
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitBeats advances the simulated clock and waits until the runner's
// heartbeat has recorded it, k times in a row.
func waitBeats(t *testing.T, e *env, k int) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range k {
		e.clock.Advance(time.Millisecond)
		want := e.clock.Now().UnixNano()
		waitUntil(t, "a heartbeat", func() bool {
			var beat int64
			err := db.QueryRow(`SELECT heartbeat_at FROM runners WHERE id = 'sim'`).Scan(&beat)
			return err == nil && beat >= want
		})
	}
}

func countAttempts(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM attempts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
