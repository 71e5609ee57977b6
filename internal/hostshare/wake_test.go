package hostshare

import (
	"context"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits/redistest"
)

// TestWakePushesAtOnce: a receiver's inbound opt-out wakes the sync, which
// pushes it to the shared list without waiting for its next poll (the
// poll here never comes).
func TestWakePushesAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	a := newHost(t, srv)
	never := make(chan time.Time)
	pulled := make(chan struct{}, 4)
	a.sync.after = func(time.Duration) <-chan time.Time {
		pulled <- struct{}{}
		return never
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.sync.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-pulled // the first pull, at start

	a.optOut(t, "+4915100000009")
	a.sync.Wake()
	select {
	case <-pulled:
	case <-time.After(10 * time.Second):
		t.Fatal("Wake did not start a pull")
	}
	list, err := a.shared.Suppressions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Phone != "+4915100000009" {
		t.Errorf("shared list %+v after Wake, want the opt-out", list)
	}
}
