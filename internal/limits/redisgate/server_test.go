package redisgate

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a real redis-server on a free loopback port, with its own
// temporary directory and no persistence, stopped when the test ends.
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts a redis-server for t, or skips t when none is installed
// (.ci/run installs one, so CI runs these tests).
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server); the Redis gate's tests need a real one")
	}
	s := &redisServer{t: t, bin: bin, dir: t.TempDir()}
	var last error
	for range 5 {
		if s.port, last = freePort(); last != nil {
			continue
		}
		if last = s.start(); last == nil {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatalf("start redis-server: %v", last)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *redisServer) start() error {
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server on port %d exited at start (port taken?)", s.port)
		default:
		}
		if err := c.Ping(context.Background()).Err(); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("redis-server on port %d: no answer in 10 s: %w", s.port, err)
		}
		time.Sleep(20 * time.Millisecond) // waiting for a process to listen, not for a rate
	}
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }
func (s *redisServer) url() string  { return "redis://" + s.addr() + "/0" }

// kill stops the server at once (SIGKILL), as a crash does.
func (s *redisServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// restart starts it again on the same port: without persistence it comes
// back empty.
func (s *redisServer) restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("restart redis-server: %v", err)
	}
}

func (s *redisServer) stop() { s.kill() }

// client is a plain client of the server for a test's own looks.
func (s *redisServer) client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr()})
	t.Cleanup(func() { c.Close() })
	return c
}
