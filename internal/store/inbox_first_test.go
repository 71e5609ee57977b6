package store

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/store/driver"
)

// The receiver's commit goes before the applier's transaction waiting with
// it, whether the applier waits for this process's write mutex or retries
// behind another process's lock: its posts are answered only once it
// commits (issue 25: a group commit sat behind the applier's transactions).
func TestInboxCommitGoesFirst(t *testing.T) {
	for _, behind := range []string{"this process's write", "another process's lock"} {
		t.Run(behind, func(t *testing.T) {
			st := openTest(t, newFakeClock())
			st.wmu.Lock()
			var unlocked sync.Once
			unlock := func() { unlocked.Do(st.wmu.Unlock) }
			t.Cleanup(unlock) // before the store closes, should the test fail
			release := unlock
			if behind == "another process's lock" {
				release = holdLock(t, st.path)
			}
			seen := make(chan int, 1)
			go func() {
				err := st.WithInbox(t.Context(), func(tx driver.InboxTx, _ time.Time) error {
					bodies, err := tx.Bodies(t.Context(), 10)
					seen <- len(bodies)
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
			waitWriters(t, st, func(_, others int) bool { return others == 1 })
			if behind == "another process's lock" { // the applier takes the mutex and retries
				unlock()
				waitWriters(t, st, func(_, others int) bool { return others == 0 })
			}
			stored := make(chan error, 1)
			go func() {
				stored <- st.AddToInbox(t.Context(), [][]byte{[]byte(`{"object":"whatsapp_business_account"}`)})
			}()
			waitWriters(t, st, func(first, _ int) bool { return first == 1 })
			if behind == "another process's lock" { // it has the mutex once the applier's next try yielded
				waitWriters(t, st, func(first, _ int) bool { return first == 0 })
			}
			release()
			if err := <-stored; err != nil {
				t.Fatal(err)
			}
			if n := <-seen; n != 1 {
				t.Errorf("the applier's transaction read %d bodies; want the 1 stored while it waited", n)
			}
		})
	}
}

// waitWriters yields until the writers waiting for st's write mutex
// satisfy ok, and fails the test if they never do (a guard against a
// hang, not a timing).
func waitWriters(t *testing.T, st *Store, ok func(first, others int) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(st.wmu.Waiting()); runtime.Gosched() {
		if time.Now().After(deadline) {
			first, others := st.wmu.Waiting()
			t.Fatalf("the writers never got there: %d first and %d others waiting", first, others)
		}
	}
}
