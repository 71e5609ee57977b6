package campaign

import (
	"testing"
	"time"
)

func TestLiveness(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	l := Liveness{
		Self:  Process{Host: "box", Space: "boot-1/pid:[4026531836]", PID: 1},
		Stale: 30 * time.Second,
		Alive: func(pid int) bool { return pid == 1 || pid == 42 },
		Own:   func(id string) bool { return id == "this-process" },
	}
	const here, elsewhere = "boot-1/pid:[4026531836]", "boot-1/pid:[4026532999]"
	tests := []struct {
		name   string
		r      Runner
		silent time.Duration
		want   bool
	}{
		{"other host, beating", Runner{Host: "far", PID: 9}, 3 * time.Second, false},
		{"other host, stale", Runner{Host: "far", PID: 9}, 31 * time.Second, true},
		{"other host, same pid space name, pid gone, beating", Runner{Host: "far", Space: here, PID: 77}, time.Second, false},
		{"this host, alive pid, stale heartbeat (pid reused)", Runner{Host: "box", PID: 42}, 31 * time.Second, true},
		{"this host, alive pid, beating", Runner{Host: "box", PID: 42}, 3 * time.Second, false},
		{"this host, pid gone, beating (another pid namespace)", Runner{Host: "box", PID: 77}, 2 * time.Second, false},
		{"this host, pid gone, missed beats", Runner{Host: "box", PID: 77}, 6 * time.Second, true},
		{"this host, another space, pid gone, beating", Runner{Host: "box", Space: elsewhere, PID: 77}, 2 * time.Second, false},
		{"same space, pid gone, beat just now (killed)", Runner{Host: "box", Space: here, PID: 77}, 100 * time.Millisecond, true},
		{"same space, alive pid, beating", Runner{Host: "box", Space: here, PID: 42}, 100 * time.Millisecond, false},
		{"same space, our pid, another process's id", Runner{ID: "old", Host: "box", Space: here, PID: 1}, time.Second, true},
		{"this host, our pid, another process's id (container restarted as pid 1)", Runner{ID: "old", Host: "box", PID: 1}, 6 * time.Second, true},
		{"this host, our pid, beating", Runner{ID: "old", Host: "box", PID: 1}, 2 * time.Second, false},
		{"this process's own runner, silent", Runner{ID: "this-process", Host: "box", Space: here, PID: 1}, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.HeartbeatAt = now.Add(-tt.silent)
			if got := l.Dead(tt.r, now); got != tt.want {
				t.Errorf("Dead = %v, want %v", got, tt.want)
			}
		})
	}
	// Without a probe (a reader that cannot see processes), heartbeats
	// alone decide.
	blind := Liveness{Self: l.Self, Stale: 15 * time.Second}
	gone := Runner{Host: "box", Space: here, PID: 77, HeartbeatAt: now.Add(-10 * time.Second)}
	if blind.Dead(gone, now) {
		t.Error("no probe, beat 10 s ago: dead, want alive until 15 s")
	}
	if gone.HeartbeatAt = now.Add(-16 * time.Second); !blind.Dead(gone, now) {
		t.Error("no probe, beat 16 s ago: alive, want dead")
	}
}
