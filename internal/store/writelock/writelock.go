// Package writelock is the mutex one process's write transactions queue
// on, with a way in first for the writes something answers on.
//
// The webhook receiver answers Meta's posts only once their bodies are
// committed, and its commits shared one queue with the applier, the
// checkpointer and (inside `campaign run`) the sender. Go's sync.Mutex
// hands itself to a waiter in the order it likes (a waiter is served
// first only after it starved 1 ms), so a group commit sat behind two or
// three of the applier's back-to-back transactions, each of them also
// waiting out another process's lock (issue 25: the receiver's p99).
// A LockFirst caller is handed the lock as it is let go, before every
// Lock caller waiting, and a holder between tries (Yield) steps aside for
// it. Among themselves, Lock callers get the lock as from a sync.Mutex:
// the claim path's interleavings, which some of its tests depend on, are
// those of before. A first locker never hands the lock to another one, so
// Lock callers are not starved.
package writelock

import "sync"

// Mutex is a mutual exclusion lock whose LockFirst callers go before its
// Lock callers. Its zero value is unlocked.
type Mutex struct {
	inner sync.Mutex // the lock itself
	mu    sync.Mutex // guards the fields below
	// firsts are the LockFirst callers waiting, in order: each is told on
	// its channel whether it was handed the lock (true) or is to take it
	// as a Lock caller does (false).
	firsts []chan bool
	others int  // Lock callers waiting
	first  bool // a LockFirst caller holds the lock
}

// Lock locks m, after the LockFirst callers waiting when it is let go.
func (m *Mutex) Lock() {
	m.mu.Lock()
	m.others++
	m.mu.Unlock()
	m.inner.Lock()
	m.mu.Lock()
	m.others--
	m.mu.Unlock()
}

// LockFirst locks m before every Lock caller waiting.
func (m *Mutex) LockFirst() {
	m.mu.Lock()
	if m.inner.TryLock() {
		m.first = true
		m.mu.Unlock()
		return
	}
	ch := make(chan bool, 1)
	m.firsts = append(m.firsts, ch)
	m.mu.Unlock()
	if !<-ch {
		m.inner.Lock()
		m.mu.Lock()
		m.first = true
		m.mu.Unlock()
	}
}

// Unlock unlocks m: a LockFirst caller waiting has it next, unless a first
// locker is letting it go.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.first && m.handFirst() {
		return
	}
	m.first = false
	// The firsts waiting take it as Lock callers do, with those.
	for _, ch := range m.firsts {
		ch <- false
	}
	m.firsts = m.firsts[:0]
	m.inner.Unlock()
}

// handFirst hands the lock to the first LockFirst caller waiting, if any:
// inner stays locked, on its behalf now. m.mu is held.
func (m *Mutex) handFirst() bool {
	if len(m.firsts) == 0 {
		return false
	}
	ch := m.firsts[0]
	m.firsts = m.firsts[1:]
	m.first = true
	ch <- true
	return true
}

// Yield lets a LockFirst caller waiting have m, and locks it again after,
// as a Lock caller: a holder calls it where it holds nothing m guards, as
// between the tries of a write another process's lock refused. A first
// locker does not yield. It reports whether it let go.
func (m *Mutex) Yield() bool {
	m.mu.Lock()
	handed := !m.first && m.handFirst()
	m.mu.Unlock()
	if handed {
		m.Lock()
	}
	return handed
}

// Waiting is how many LockFirst and Lock callers wait now.
func (m *Mutex) Waiting() (first, others int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.firsts), m.others
}
