package runner

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestLivenessOfARealProcess: a runner registered by a process of this
// machine is alive while the process runs and dead as soon as it is killed,
// although its last heartbeat is a moment old.
func TestLivenessOfARealProcess(t *testing.T) {
	here := ThisProcess()
	if here.Space == "" {
		t.Skip("no pid space to read here (not Linux): only heartbeats decide")
	}
	if here.PID != os.Getpid() {
		t.Fatalf("ThisProcess pid %d, want %d", here.PID, os.Getpid())
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	now := time.Now()
	r := campaign.Runner{ID: "child", Host: here.Host, Space: here.Space, PID: cmd.Process.Pid, HeartbeatAt: now.Add(-time.Second)}
	live := Liveness(30 * time.Second)
	if live.Dead(r, now) {
		t.Fatal("a running process's runner counts as dead")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // reaped: the pid is gone
	if !live.Dead(r, now) {
		t.Error("the killed process's runner, beat 1 s ago, counts as alive")
	}
	// Another space (a container with its own pid namespace under the same
	// host name): the pid says nothing until the heartbeats stopped.
	r.Space = "another-boot/pid:[1]"
	if live.Dead(r, now) {
		t.Error("a runner of another pid space, beat 1 s ago, counts as dead")
	}
}

// TestHostNamedByEnv: WASEND_HOST names this process's host; a runner of
// this pid space under another host's name is dead by its heartbeat only,
// even when its process is gone.
func TestHostNamedByEnv(t *testing.T) {
	t.Setenv(hostEnv, "host-b")
	here := ThisProcess()
	if here.Host != "host-b" {
		t.Fatalf("ThisProcess host %q with %s=host-b", here.Host, hostEnv)
	}
	now := time.Now()
	gone := campaign.Runner{ID: "a", Host: "host-a", Space: here.Space, PID: 1 << 30, HeartbeatAt: now.Add(-time.Second)}
	live := Liveness(30 * time.Second)
	if live.Dead(gone, now) {
		t.Error("another host's runner, beat 1 s ago, counts as dead by a pid of this machine")
	}
	if !live.Dead(gone, now.Add(31*time.Second)) {
		t.Error("another host's runner, silent for 32 s, counts as alive")
	}
	t.Setenv(hostEnv, "")
	if name, _ := os.Hostname(); ThisProcess().Host != name {
		t.Errorf("ThisProcess host %q without %s, want the hostname %q", ThisProcess().Host, hostEnv, name)
	}
}
