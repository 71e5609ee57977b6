package runner

import (
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// pidGrace is how long a runner of this host whose process is gone (or
// whose pid is now this process's own) may have been silent before it
// counts as dead without waiting the whole stale period. Its heartbeat
// (every 2 s) still has to have stopped: the pid alone is no proof, since
// two containers may share a hostname and each have its own pid 1.
const pidGrace = 5 * time.Second

// ownRunners are the runner ids this process registered: a row with this
// host and pid but another id is a previous process that had the same pid
// (a container restarted as pid 1).
var ownRunners sync.Map

// liveness decides whether a registered runner is gone. Heartbeats decide,
// across hosts and within one: a runner silent for longer than stale is
// dead wherever it runs, even if a process with its pid exists (pids are
// reused); a runner of this host whose pid is gone or was reused is dead
// once it missed a few beats.
type liveness struct {
	host  string
	pid   int
	stale time.Duration
	alive func(pid int) bool // processAlive, or a test's stand-in
}

func (l liveness) dead(r campaign.Runner, now time.Time) bool {
	if _, ours := ownRunners.Load(r.ID); ours {
		return false
	}
	silent := now.Sub(r.HeartbeatAt)
	if silent > l.stale {
		return true
	}
	if r.Host != l.host || silent <= pidGrace {
		return false
	}
	return r.PID == l.pid || !l.alive(r.PID)
}

// processAlive reports whether a process with pid exists on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
