package writelock

import (
	"runtime"
	"slices"
	"sync"
	"testing"
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
		want    string // the order they hold it in
	}{
		{"a", "a"},
		{"A", "A"},
		{"abc", "abc"},
		{"aB", "Ba"},
		{"Ab", "Ab"},
		{"abC", "Cab"},
		// A first locker went ahead of a waiting Lock caller: its is the next turn.
		{"ABc", "AcB"},
		{"aBC", "BaC"},
	} {
		t.Run(tc.callers, func(t *testing.T) {
			var m Mutex
			got := queue(t, &m, tc.callers)
			if want := splitChars(tc.want); !slices.Equal(got, want) {
				t.Errorf("held in the order %v; want %v", got, want)
			}
		})
	}
}

// A first locker that went ahead of a Lock caller owes it the next turn,
// even with another first locker waiting then.
func TestOwedTurn(t *testing.T) {
	var (
		m     Mutex
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	took := func(who string) {
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
	}
	m.Lock()
	wg.Add(3)
	go func() { defer wg.Done(); m.Lock(); took("other"); m.Unlock() }()
	waitFor(&m, func(_, others int) bool { return others == 1 })
	holding, release := make(chan struct{}), make(chan struct{})
	go func() {
		defer wg.Done()
		m.LockFirst()
		took("first")
		close(holding)
		<-release
		m.Unlock()
	}()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	m.Unlock()
	<-holding
	go func() { defer wg.Done(); m.LockFirst(); took("second first"); m.Unlock() }()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	close(release)
	wg.Wait()
	if want := []string{"first", "other", "second first"}; !slices.Equal(order, want) {
		t.Errorf("held in the order %v; want %v", order, want)
	}
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

func TestUnlockUnlockedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Unlock of an unlocked Mutex did not panic")
		}
	}()
	var m Mutex
	m.Unlock()
}

// A first locker holding the lock while others are owed the next turn
// does not let it go to another first locker when it yields.
func TestYieldOwed(t *testing.T) {
	var m Mutex
	m.Lock()
	holding, release := make(chan struct{}), make(chan struct{})
	go func() { m.LockFirst(); close(holding); <-release; m.Unlock() }()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	go func() { m.Lock(); m.Unlock() }()
	waitFor(&m, func(_, others int) bool { return others == 1 })
	m.Unlock()
	<-holding // the first locker holds it, owing the other the next turn
	go func() { m.LockFirst(); m.Unlock() }()
	waitFor(&m, func(first, _ int) bool { return first == 1 })
	// As the holder would between its tries (the lock state alone decides).
	if m.Yield() {
		t.Error("Yield let a first locker go ahead of the turn the others are owed")
	}
	close(release)
}
