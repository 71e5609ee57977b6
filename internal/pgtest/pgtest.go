// Package pgtest starts a real postgres for the tests of packages that use
// Postgres (the store's Postgres driver): one server per test binary, one
// fresh database per test, made from a migrated template so a test does
// not pay for the migrations. Imported by tests only.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// binDirs are where Debian's postgresql package puts the server, newest
// first; PATH is tried before them.
var binDirs = []string{"/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"}

// Server is a real postgres on a free loopback port with its socket and
// data in a temporary directory, stopped by Main when the tests end.
type Server struct {
	dir  string // owned by the server's user: data/ and the socket
	port int
	cmd  *exec.Cmd
	done chan struct{}

	mu        sync.Mutex
	templates map[string]error // name → how its preparation ended
	seq       atomic.Int64
}

var (
	once     sync.Once
	shared   *Server
	skipMsg  string
	startErr error
)

// Main runs the package's tests, then stops the server if one started.
// A package using pgtest calls it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server if one started: for a TestMain that runs its
// tests through another harness (testproc.Main) and so cannot call Main.
func Stop() {
	if shared != nil {
		shared.stop()
	}
}

// Start returns the test binary's server, starting it on first use, or
// skips t when postgres is not installed (.ci/run installs it, so CI runs
// these tests).
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, skipMsg, startErr = start() })
	if skipMsg != "" {
		t.Skip(skipMsg)
	}
	if startErr != nil {
		t.Fatalf("start postgres: %v", startErr)
	}
	return shared
}

// findBin finds the postgres server binaries' directory.
func findBin() (string, bool) {
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), true
	}
	for _, d := range binDirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, true
		}
	}
	return "", false
}

func start() (*Server, string, error) {
	bin, ok := findBin()
	if !ok {
		return nil, "postgres is not installed (Debian: apt-get install postgresql); this test needs a real one", nil
	}
	cred, err := credential()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, "", err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, "", err
		}
	}
	s := &Server{dir: dir, templates: map[string]error{}}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.data(), "-U", "wasend", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("initdb: %w: %s", err, lastLines(out))
	}
	var last error
	for range 5 {
		if s.port, last = freePort(); last != nil {
			continue
		}
		if last = s.run(bin, cred); last == nil {
			return s, "", nil
		}
	}
	os.RemoveAll(dir)
	return nil, "", last
}

// credential is the postgres user's when running as root (postgres
// refuses to run as root), nil otherwise: the server runs as we do.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, postgres must run as another user, and there is no user postgres: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run starts the server and waits until it takes connections. Durability
// is off: a test's database dies with the test.
func (s *Server) run(bin string, cred *syscall.Credential) error {
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", s.data(), "-p", strconv.Itoa(s.port),
		"-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "log_min_messages=fatal")
	// SIGQUIT (immediate shutdown) if the test binary dies without Main.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("postgres on port %d exited at start (port taken?)", s.port)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("postgres on port %d: no answer in 30 s: %w", s.port, err)
		}
		time.Sleep(50 * time.Millisecond) // waiting for a process to listen, not for a rate
	}
}

// stop shuts the server down at once and removes its directory.
func (s *Server) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.cmd = nil
	}
	os.RemoveAll(s.dir)
}

// DSN is the URL of database db over the server's unix socket.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://wasend@/%s?host=%s&port=%d&sslmode=disable", db, s.dir, s.port)
}

// WithPassword is dsn (one of DSN's) with password in it, which the
// server (trust authentication) ignores: for the tests that check a URL's
// password is shown nowhere.
func WithPassword(dsn, password string) string {
	return strings.Replace(dsn, "postgres://wasend@", "postgres://wasend:"+password+"@", 1)
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// admin runs statements on the maintenance database.
func (s *Server) admin(ctx context.Context, stmts ...string) error {
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// Template makes database name once per test binary, runs prepare on its
// DSN (migrations, typically) and marks it a template, for NewDB. prepare
// must close its connections before it returns: a template copies only
// while nobody is connected to it.
func (s *Server) Template(t testing.TB, name string, prepare func(ctx context.Context, dsn string) error) {
	t.Helper()
	if !validName(name) {
		t.Fatalf("pgtest: template name %q: letters, digits and _ only", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err, done := s.templates[name]
	if !done {
		ctx := context.Background()
		err = s.admin(ctx, "CREATE DATABASE "+name)
		if err == nil && prepare != nil {
			err = prepare(ctx, s.DSN(name))
		}
		if err == nil {
			err = s.admin(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
		}
		s.templates[name] = err
	}
	if err != nil {
		t.Fatalf("pgtest: template %s: %v", name, err)
	}
}

// NewDB makes a fresh database for t, a copy of template (an empty one
// when ""), dropped when t ends; it returns its DSN.
func (s *Server) NewDB(t testing.TB, template string) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.seq.Add(1))
	q := "CREATE DATABASE " + name
	if template != "" {
		if !validName(template) {
			t.Fatalf("pgtest: template name %q: letters, digits and _ only", template)
		}
		// FILE_COPY: copy the files (no fsync here) rather than log every block.
		q += " TEMPLATE " + template + " STRATEGY FILE_COPY"
	}
	if err := s.admin(t.Context(), q); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.admin(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s.DSN(name)
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func lastLines(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}
