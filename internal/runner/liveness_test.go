package runner

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

func TestLiveness(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	ownRunners.Store("this-process", struct{}{})
	t.Cleanup(func() { ownRunners.Delete("this-process") })
	l := liveness{host: "box", pid: 1, stale: 30 * time.Second, alive: func(pid int) bool { return pid == 1 || pid == 42 }}
	tests := []struct {
		name   string
		r      campaign.Runner
		silent time.Duration
		want   bool
	}{
		{"other host, beating", campaign.Runner{Host: "far", PID: 9}, 3 * time.Second, false},
		{"other host, stale", campaign.Runner{Host: "far", PID: 9}, 31 * time.Second, true},
		{"this host, alive pid, stale heartbeat (pid reused)", campaign.Runner{Host: "box", PID: 42}, 31 * time.Second, true},
		{"this host, alive pid, beating", campaign.Runner{Host: "box", PID: 42}, 3 * time.Second, false},
		{"this host, pid gone, beating (another pid namespace)", campaign.Runner{Host: "box", PID: 77}, 2 * time.Second, false},
		{"this host, pid gone, missed beats", campaign.Runner{Host: "box", PID: 77}, 6 * time.Second, true},
		{"this host, our pid, another process's id (container restarted as pid 1)", campaign.Runner{ID: "old", Host: "box", PID: 1}, 6 * time.Second, true},
		{"this host, our pid, beating", campaign.Runner{ID: "old", Host: "box", PID: 1}, 2 * time.Second, false},
		{"this process's own runner, silent", campaign.Runner{ID: "this-process", Host: "box", PID: 1}, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.HeartbeatAt = now.Add(-tt.silent)
			if got := l.dead(tt.r, now); got != tt.want {
				t.Errorf("dead = %v, want %v", got, tt.want)
			}
		})
	}
}
