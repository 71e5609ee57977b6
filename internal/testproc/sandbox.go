package testproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// Sandbox is a running `wasend sandbox serve --record FILE`.
type Sandbox struct {
	URL    string // the base URL it listens on
	Record string // the file it records every request in, a JSON line each
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// StartSandbox serves the sandbox as a separate process on a free loopback
// port, recording into dir, with args as its fault flags, and stops it
// with SIGINT when the test ends.
func StartSandbox(t *testing.T, dir string, args ...string) *Sandbox {
	t.Helper()
	return StartSandboxEnv(t, dir, nil, args...)
}

// StartSandboxEnv is StartSandbox with env (NAME=value) added to BaseEnv:
// the app secret of `--webhook`.
func StartSandboxEnv(t *testing.T, dir string, env []string, args ...string) *Sandbox {
	t.Helper()
	s := &Sandbox{Record: filepath.Join(dir, "sandbox.jsonl"), done: make(chan struct{})}
	all := append([]string{"sandbox", "serve", "--addr", "127.0.0.1:0", "--record", s.Record}, args...)
	s.cmd = exec.Command(binary, all...)
	s.cmd.Env = append(BaseEnv(), env...)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Logf("sandbox: wasend %s", strings.Join(all, " "))
	ready := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "sandbox listening on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				ready <- url
			}
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
		}
		io.Copy(io.Discard, pipe)
	}()
	select {
	case s.URL = <-ready:
	case <-s.done:
		s.cmd.Wait()
		t.Fatalf("sandbox ended before listening:\n%s", s.stderrText())
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		t.Fatal("sandbox did not start listening within 10s")
	}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGINT)
		ended := make(chan error, 1)
		go func() { <-s.done; ended <- s.cmd.Wait() }()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("sandbox: %v\n%s", err, s.stderrText())
			}
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			t.Errorf("sandbox did not stop within 15s of SIGINT")
		}
	})
	return s
}

func (s *Sandbox) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// Records reads the sandbox's record file. A line still being written is
// left for the next read.
func (s *Sandbox) Records(t *testing.T) []sandbox.Record {
	t.Helper()
	data, err := os.ReadFile(s.Record)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var out []sandbox.Record
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r sandbox.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s line %d: %v", s.Record, i+1, err)
		}
		out = append(out, r)
	}
	return out
}

// Spans returns, per campaign ("c1", "c2" … from the callback data), the
// time of its first and of its last request among recs, which must be in
// the order the server received them.
func Spans(recs []sandbox.Record) (first, last map[string]time.Time) {
	first, last = map[string]time.Time{}, map[string]time.Time{}
	for _, r := range recs {
		c, _, _ := strings.Cut(strings.TrimPrefix(r.CallbackData, "wasend:"), ":")
		if first[c].IsZero() {
			first[c] = r.At
		}
		last[c] = r.At
	}
	return first, last
}

// AcceptedOutcome reports whether the server took the message: a slow or
// dropped answer still delivered it.
func AcceptedOutcome(o string) bool {
	return o == sandbox.OutcomeAccepted || o == sandbox.OutcomeSlow || o == sandbox.OutcomeDropped
}

// Accepted returns, per recipient, the records of the requests the server
// accepted, in the order of recs.
func Accepted(recs []sandbox.Record) map[string][]sandbox.Record {
	out := map[string][]sandbox.Record{}
	for _, r := range recs {
		if AcceptedOutcome(r.Outcome) {
			out[r.To] = append(out[r.To], r)
		}
	}
	return out
}
