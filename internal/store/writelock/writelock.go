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
// LockFirst goes before every Lock waiting, and a holder between tries
// (Yield) steps aside for it; the others never wait more than one turn of
// it: after a first locker went ahead of them, the next turn is theirs.
package writelock

import "sync"

// Mutex is a mutual exclusion lock whose LockFirst callers go before its
// Lock callers. Its zero value is unlocked.
type Mutex struct {
	mu     sync.Mutex
	held   bool
	first  int           // LockFirst callers waiting
	others int           // Lock callers waiting
	owed   bool          // a first locker went ahead of others: theirs is the next turn
	let    chan struct{} // closed when the lock is let go (nil: nobody waits)
}

// Lock locks m once no LockFirst caller waits (or they owe the turn).
func (m *Mutex) Lock() {
	m.mu.Lock()
	m.lock()
	m.mu.Unlock()
}

// lock is Lock with m.mu held.
func (m *Mutex) lock() {
	m.others++
	for m.held || (m.first > 0 && !m.owed) {
		m.wait()
	}
	m.others--
	m.held, m.owed = true, false
}

// LockFirst locks m before any Lock caller waiting, unless the last
// LockFirst already went ahead of them.
func (m *Mutex) LockFirst() {
	m.mu.Lock()
	m.first++
	for m.held || m.owed {
		m.wait()
	}
	m.first--
	m.held, m.owed = true, m.others > 0
	m.mu.Unlock()
}

// Unlock unlocks m.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	m.unlock()
	m.mu.Unlock()
}

// unlock is Unlock with m.mu held.
func (m *Mutex) unlock() {
	if !m.held {
		panic("writelock: unlock of an unlocked Mutex")
	}
	m.held = false
	if m.let != nil {
		close(m.let)
		m.let = nil
	}
}

// wait waits, with m.mu held, until the lock is let go.
func (m *Mutex) wait() {
	if m.let == nil {
		m.let = make(chan struct{})
	}
	let := m.let
	m.mu.Unlock()
	<-let
	m.mu.Lock()
}

// Yield lets a LockFirst caller waiting have m, and locks it again after
// (a turn among the Lock callers, which it is then owed): a holder calls it where it holds
// nothing m guards, as between the tries of a write another process's
// lock refused. It reports whether it let go.
func (m *Mutex) Yield() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first == 0 {
		return false
	}
	m.unlock()
	m.lock() // counted among the others before the first locker takes m
	return true
}

// Waiting is how many LockFirst and Lock callers wait now.
func (m *Mutex) Waiting() (first, others int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.first, m.others
}
