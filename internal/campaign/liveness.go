package campaign

import "time"

// PIDGrace is how long a runner whose process seems gone may have been
// silent before it counts as dead when its pid may be another space's (the
// same host name, no shared pid namespace): two containers may share a
// hostname and each have its own pid 1, so its heartbeat (every 2 s) has
// to have stopped too.
const PIDGrace = 5 * time.Second

// Process is where a runner runs: the host's name, the space its pid is
// counted in (boot id and pid namespace; "" when unknown) and the pid.
type Process struct {
	Host  string
	Space string
	PID   int
}

// Liveness is the one rule of whether a registered runner still runs,
// read by the runner that rescues orphaned rows and by what status, list
// and show call running. Heartbeats decide everywhere: a runner silent for
// longer than Stale is dead, even if a process with its pid exists (pids
// are reused). Where the pid means something, it decides sooner: in the
// same pid space, a runner whose process is gone (or whose pid is now the
// reader's own) is dead at once; on a host of the same name whose space is
// not known to be the same, only after PIDGrace of silence.
type Liveness struct {
	Self  Process
	Stale time.Duration
	// Alive reports whether a process with pid exists in Self's space; nil
	// lets only the heartbeat decide.
	Alive func(pid int) bool
	// Own reports the runners this process registered: never dead to it,
	// even when another with its host and pid was (a container restarted
	// as pid 1). Nil: none.
	Own func(id string) bool
}

// Dead reports whether r is gone at now.
func (l Liveness) Dead(r Runner, now time.Time) bool {
	if l.Own != nil && l.Own(r.ID) {
		return false
	}
	silent := now.Sub(r.HeartbeatAt)
	if silent > l.Stale {
		return true
	}
	if l.Alive == nil || r.Host != l.Self.Host {
		return false
	}
	sameSpace := r.Space != "" && r.Space == l.Self.Space
	if !sameSpace && silent <= PIDGrace {
		return false
	}
	return r.PID == l.Self.PID || !l.Alive(r.PID)
}
