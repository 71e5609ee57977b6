package writelock

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// queue has the lock taken by named callers, each once, in turn: "a"
// Lock, "A" LockFirst, each after the one before it waits. It returns the
// order they held it in once the test's own hold is let go.
func queue(t *testing.T, m *Mutex, callers string) []string {
	t.Helper()
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	m.Lock()
	for _, c := range callers {
		first, others := m.Waiting()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c >= 'A' && c <= 'Z' {
				m.LockFirst()
			} else {
				m.Lock()
			}
			mu.Lock()
			order = append(order, string(c))
			mu.Unlock()
			m.Unlock()
		}()
		waitFor(m, func(f, o int) bool { return f+o == first+others+1 })
	}
	m.Unlock()
	wg.Wait()
	return order
}

// waitFor yields until the queue's counts satisfy ok.
func waitFor(m *Mutex, ok func(first, others int) bool) {
	for !ok(m.Waiting()) {
		runtime.Gosched()
	}
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		callers string // lower case Lock, upper case LockFirst, queued in this order
		want    string // who hold it first, in this order (Lock callers as from a sync.Mutex)
	}{
		{"a", "a"},
		{"A", "A"},
		{"aB", "Ba"},
		{"Ab", "Ab"},
		{"abC", "C"},
		{"ABc", "A"},
	} {
		t.Run(tc.callers, func(t *testing.T) {
			var m Mutex
			got := queue(t, &m, tc.callers)
			if want := splitChars(tc.want); !slices.Equal(got[:len(want)], want) {
				t.Errorf("held in the order %v; want %v first", got, want)
			}
		})
	}
}

// First lockers never hand the lock to one another: four that take it in
// turn without a pause do not keep a Lock caller out.
func TestFirstsDoNotStarveOthers(t *testing.T) {
	var (
		m    Mutex
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	m.LockFirst()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				m.LockFirst()
				m.Unlock()
			}
		}()
	}
	waitFor(&m, func(first, _ int) bool { return first == 4 })
	got := make(chan struct{})
	go func() { m.Lock(); close(got); m.Unlock() }()
	waitFor(&m, func(_, others int) bool { return others == 1 })
	m.Unlock()
	select {
	case <-got:
	case <-time.After(10 * time.Second): // a guard against a hang, not a timing
		t.Error("the Lock caller never got the lock between the first lockers")
	}
	close(stop)
	wg.Wait()
}

func splitChars(s string) []string {
	var out []string
	for _, c := range s {
		out = append(out, string(c))
	}
	return out
}

func TestYield(t *testing.T) {
	var m Mutex
	m.Lock()
	if m.Yield() {
		t.Fatal("Yield let go with nobody waiting first")
	}
	took := make(chan struct{})
	go func() {
		m.LockFirst()
		close(took)
		m.Unlock()
	}()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	if !m.Yield() {
		t.Fatal("Yield kept the lock from a LockFirst caller waiting")
	}
	select {
	case <-took:
	default:
		t.Fatal("Yield returned before the LockFirst caller had the lock")
	}
	if m.Yield() {
		t.Error("Yield let go again with nobody waiting")
	}
	m.Unlock()
}

// A first locker does not yield to another: it would chain first lockers.
func TestFirstDoesNotYield(t *testing.T) {
	var m Mutex
	m.LockFirst()
	done := make(chan struct{})
	go func() { m.LockFirst(); m.Unlock(); close(done) }()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	if m.Yield() {
		t.Error("a first locker yielded to another")
	}
	m.Unlock()
	<-done
}
