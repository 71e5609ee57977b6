package pgstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// A runner registered beats; unregistered (or never registered), its
// heartbeat says it is not found, so its engine registers again.
func TestRunnersHeartbeat(t *testing.T) {
	st, err := pgstore.Open(t.Context(), newDB(t), pgstore.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	r := campaign.Runner{ID: "r1", CampaignID: 1, Host: "h", PID: 42, StartedAt: t0, HeartbeatAt: t0}
	for _, step := range []struct {
		name    string
		do      func() error
		wantErr error
	}{
		{"heartbeat before register", func() error { return st.Heartbeat(ctx, "r1", t0) }, campaign.ErrNotFound},
		{"register", func() error { return st.RegisterRunner(ctx, r) }, nil},
		{"register again", func() error { return st.RegisterRunner(ctx, r) }, nil},
		{"heartbeat", func() error { return st.Heartbeat(ctx, "r1", t0.Add(time.Second)) }, nil},
		{"unregister", func() error { return st.UnregisterRunner(ctx, "r1") }, nil},
		{"heartbeat after unregister", func() error { return st.Heartbeat(ctx, "r1", t0.Add(2*time.Second)) }, campaign.ErrNotFound},
	} {
		if err := step.do(); !errors.Is(err, step.wantErr) || (err != nil) != (step.wantErr != nil) {
			t.Errorf("%s: err = %v, want %v", step.name, err, step.wantErr)
		}
	}
}
