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
// Lock callers; each kind in the order they came. The lock is handed to
// the next waiter as it is let go, so nobody barges in ahead of a waiter.
// Its zero value is unlocked.
type Mutex struct {
	mu     sync.Mutex
	held   bool
	firsts []chan struct{} // LockFirst callers waiting, each closed when handed the lock
	others []chan struct{} // Lock callers waiting
	owed   bool            // a first locker went ahead of others: theirs is the next turn
}

// Lock locks m, after every LockFirst caller waiting (unless they owe the
// turn) and every Lock caller before it.
func (m *Mutex) Lock() { m.lock(&m.others) }

// LockFirst locks m before any Lock caller waiting, unless the last
// LockFirst already went ahead of them.
func (m *Mutex) LockFirst() { m.lock(&m.firsts) }

// lock takes m at once if it is free, else waits in queue until handed it.
func (m *Mutex) lock(queue *[]chan struct{}) {
	m.mu.Lock()
	if !m.held {
		m.held = true
		m.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	*queue = append(*queue, ch)
	m.mu.Unlock()
	<-ch
}

// Unlock unlocks m: the next waiter has it.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		panic("writelock: unlock of an unlocked Mutex")
	}
	m.handOn()
}

// handOn hands the lock to the next waiter, or lets it go; m.mu is held.
func (m *Mutex) handOn() {
	var next chan struct{}
	switch {
	case len(m.firsts) > 0 && !(m.owed && len(m.others) > 0):
		next, m.firsts = m.firsts[0], m.firsts[1:]
		m.owed = len(m.others) > 0
	case len(m.others) > 0:
		next, m.others = m.others[0], m.others[1:]
		m.owed = false
	default:
		m.held, m.owed = false, false
		return
	}
	close(next)
}

// Yield lets a LockFirst caller waiting have m, and locks it again
// after (the next turn is the holder's): a holder calls it where it holds
// nothing m guards, as between the tries of a write another process's
// lock refused. It reports whether it let go.
func (m *Mutex) Yield() bool {
	m.mu.Lock()
	if len(m.firsts) == 0 || m.owed && len(m.others) > 0 { // none, or none may go next
		m.mu.Unlock()
		return false
	}
	ch := make(chan struct{})
	m.others = append([]chan struct{}{ch}, m.others...)
	m.handOn()
	m.mu.Unlock()
	<-ch
	return true
}

// Waiting is how many LockFirst and Lock callers wait now.
func (m *Mutex) Waiting() (first, others int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.firsts), len(m.others)
}
