package redisgate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// processAccounts: a's burst and b's cap bind; their rates are too slow to
// add a token while the test runs.
var processAccounts = []limits.Account{
	{Name: "a", Limit: ratelimit.Limit{Rate: 0.001, Burst: 30}, DailyCap: 1000},
	{Name: "b", Limit: ratelimit.Limit{Rate: 0.001, Burst: 1000}, DailyCap: 25},
}

const processToday = "2026-03-02"

// processReach: the second round of each helper admits distinct recipients
// to a portfolio of this reach, on a number whose own limits never bind.
var (
	processReach     = ratelimit.Reach{Limit: 17}
	processReachAcct = []limits.Account{{Name: "r", Limit: ratelimit.Limit{Rate: 0.001, Burst: 1000}, DailyCap: 1000}}
)

// M processes (this test binary run again), each with 8 goroutines, admit
// at once through one Redis with Redis's own clock: together they get
// exactly the limits.
func TestAdmitFromProcesses(t *testing.T) {
	if os.Getenv("WASEND_GATE_HELPER") != "" {
		t.Skip("inside a helper process")
	}
	s := startRedis(t)
	ctx := context.Background()
	g, err := Open(ctx, s.url(), "procs")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a", "b"}, Today: processToday, Force: true}); err != nil {
		t.Fatal(err)
	}
	gr, err := Open(ctx, s.url(), "procs-reach")
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close()
	if _, err := gr.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"r"}, Today: processToday, Force: true}); err != nil {
		t.Fatal(err)
	}
	const procs = 4
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAdmitHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "WASEND_GATE_HELPER="+strconv.Itoa(i), "WASEND_GATE_URL="+s.url())
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	by := map[string]int{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i].String())
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if name, n, ok := strings.Cut(strings.TrimSpace(line), " admitted "); ok && (name == "a" || name == "b" || name == "reach") {
				k, err := strconv.Atoi(n)
				if err != nil {
					t.Fatalf("helper %d: %q", i, line)
				}
				by[name] += k
			}
		}
	}
	if by["a"] != 30 || by["b"] != 25 {
		t.Fatalf("%d processes admitted %v, want exactly a 30 (its burst) and b 25 (its cap)", procs, by)
	}
	if by["reach"] != processReach.Limit {
		t.Fatalf("%d processes admitted %d distinct recipients, want exactly the reach %d", procs, by["reach"], processReach.Limit)
	}
	if st, err := gr.State(ctx, processReachAcct, nil); err != nil || st.Reach.Used != processReach.Limit {
		t.Fatalf("Redis holds %d recipients in the window (%v), want %d", st.Reach.Used, err, processReach.Limit)
	}
	st, err := g.State(ctx, processAccounts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, as := range st.Accounts {
		if as.Used != by[as.Name] {
			t.Errorf("Redis counts %d for %s, the processes %d", as.Used, as.Name, by[as.Name])
		}
	}
}

// TestAdmitHelperProcess is one of TestAdmitFromProcesses's processes.
func TestAdmitHelperProcess(t *testing.T) {
	id := os.Getenv("WASEND_GATE_HELPER")
	if id == "" {
		t.Skip("run by TestAdmitFromProcesses")
	}
	ctx := context.Background()
	g, err := Open(ctx, os.Getenv("WASEND_GATE_URL"), "procs")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var (
		mu sync.Mutex
		by = map[string]int{}
		wg sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				a, err := g.Admit(ctx, limits.Request{ClaimID: fmt.Sprintf("p%s-w%d-%d", id, w, i), Accounts: processAccounts, Today: processToday})
				if err != nil {
					t.Error(err)
					return
				}
				if a.OK {
					mu.Lock()
					by[a.Claim.Account]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	gr, err := Open(ctx, os.Getenv("WASEND_GATE_URL"), "procs-reach")
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close()
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				a, err := gr.Admit(ctx, limits.Request{ClaimID: fmt.Sprintf("p%s-w%d-%d", id, w, i), Accounts: processReachAcct, Today: processToday,
					Recipient: fmt.Sprintf("+1555%s%02d%02d", id, w, i), Reach: processReach})
				if err != nil {
					t.Error(err)
					return
				}
				if a.OK {
					mu.Lock()
					by["reach"]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, n := range []string{"a", "b", "reach"} {
		fmt.Printf("%s admitted %d\n", n, by[n])
	}
}
