package runner

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// ownRunners are the runner ids this process registered: a row with this
// host and pid but another id is a previous process that had the same pid
// (a container restarted as pid 1).
var ownRunners sync.Map

// Liveness is campaign.Liveness for this process: its host, pid space and
// pid, the process table as the probe, and its own runners never dead.
// stale is how long a silent runner of another host still counts as alive.
func Liveness(stale time.Duration) campaign.Liveness {
	return campaign.Liveness{
		Self:  ThisProcess(),
		Stale: stale,
		Alive: processAlive,
		Own: func(id string) bool {
			_, ours := ownRunners.Load(id)
			return ours
		},
	}
}

// hostEnv names the host in place of its hostname: hosts that share one
// (containers), or the tests that run several hosts on one machine. Runners
// of another host name count as dead by their heartbeats only.
const hostEnv = "WASEND_HOST"

// ThisProcess is where this process runs (campaign.Process).
func ThisProcess() campaign.Process {
	host := os.Getenv(hostEnv)
	if host == "" {
		host, _ = os.Hostname()
	}
	return campaign.Process{Host: host, Space: pidSpace(), PID: os.Getpid()}
}

// pidSpace names the space this process's pid is counted in: the kernel's
// boot id and the pid namespace. Two processes with the same one see the
// same process table; "" where it cannot be read (not Linux).
var pidSpace = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
})

// processAlive reports whether a process with pid exists on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
