package redisgate

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits/redistest"
)

// redisServer is redistest's real redis-server (free loopback port, its
// own temporary directory, no persistence) under the names these tests
// use.
type redisServer struct{ *redistest.Server }

// startRedis starts a redis-server for t, or skips t when none is installed
// (.ci/run installs one, so CI runs these tests).
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	return &redisServer{redistest.Start(t)}
}

func (s *redisServer) addr() string { return s.Addr() }
func (s *redisServer) url() string  { return s.URL() }

// kill stops the server at once (SIGKILL), as a crash does.
func (s *redisServer) kill() { s.Kill() }

// restart starts it again on the same port: without persistence it comes
// back empty.
func (s *redisServer) restart() { s.Restart() }

// client is a plain client of the server for a test's own looks.
func (s *redisServer) client(t testing.TB) *redis.Client { return s.Client(t) }
