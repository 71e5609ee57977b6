package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/ui"
)

// mapEnv is a Getenv backed by a map.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDatabasePath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home) // os.UserHomeDir reads the process environment
	tests := []struct {
		name    string
		dbFlag  string
		sandbox bool
		env     map[string]string
		want    string
	}{
		{
			name:   "--db wins over everything",
			dbFlag: "/flag/x.db",
			env:    map[string]string{"WASEND_DB": "/env/y.db", "XDG_DATA_HOME": "/xdg"},
			want:   "/flag/x.db",
		},
		{
			name: "WASEND_DB over XDG",
			env:  map[string]string{"WASEND_DB": "/env/y.db", "XDG_DATA_HOME": "/xdg"},
			want: "/env/y.db",
		},
		{
			name: "XDG_DATA_HOME",
			env:  map[string]string{"XDG_DATA_HOME": "/xdg"},
			want: "/xdg/wasend/wasend.db",
		},
		{
			name: "HOME fallback",
			env:  map[string]string{},
			want: filepath.Join(home, ".local", "share", "wasend", "wasend.db"),
		},
		{
			name:    "sandbox under XDG",
			sandbox: true,
			env:     map[string]string{"XDG_DATA_HOME": "/xdg"},
			want:    "/xdg/wasend/sandbox.db",
		},
		{
			name:    "sandbox ignores WASEND_DB",
			sandbox: true,
			env:     map[string]string{"WASEND_DB": "/env/y.db", "XDG_DATA_HOME": "/xdg"},
			want:    "/xdg/wasend/sandbox.db",
		},
		{
			name:    "sandbox HOME fallback",
			sandbox: true,
			env:     map[string]string{"WASEND_DB": "/env/y.db"},
			want:    filepath.Join(home, ".local", "share", "wasend", "sandbox.db"),
		},
		{
			name:    "sandbox: --db still wins",
			sandbox: true,
			dbFlag:  "/flag/x.db",
			env:     map[string]string{"WASEND_DB": "/env/y.db", "XDG_DATA_HOME": "/xdg"},
			want:    "/flag/x.db",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Factory{Getenv: mapEnv(tt.env), DBPath: tt.dbFlag, Sandbox: tt.sandbox}
			got, err := f.DatabasePath()
			if err != nil {
				t.Fatalf("DatabasePath: %v", err)
			}
			if got != tt.want {
				t.Errorf("DatabasePath = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLocation(t *testing.T) {
	tests := []struct {
		tz      string
		want    string
		wantErr []string
	}{
		{tz: "", want: time.Local.String()},
		{tz: "UTC", want: "UTC"},
		{tz: "Europe/Berlin", want: "Europe/Berlin"},
		{tz: "Mars/Olympus_Mons", wantErr: []string{"WASEND_TZ", `"Mars/Olympus_Mons"`}},
	}
	for _, tt := range tests {
		t.Run(tt.tz, func(t *testing.T) {
			f := &Factory{Getenv: mapEnv(map[string]string{"WASEND_TZ": tt.tz})}
			loc, err := f.Location()
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Location = %v, want an error", loc)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Location: %v", err)
			}
			if loc.String() != tt.want {
				t.Errorf("Location = %q, want %q", loc, tt.want)
			}
		})
	}
}

func TestToken(t *testing.T) {
	const secret = "EAAG-SECRET-factory-91c2"
	env := map[string]string{"WA_TOKEN_MAIN": secret, "WA_TOKEN_OTHER": "EAAG-OTHER-5511"}
	f := &Factory{Getenv: mapEnv(env)}

	got, err := f.Token("WA_TOKEN_MAIN")
	if err != nil || got != secret {
		t.Errorf("Token(WA_TOKEN_MAIN) = %q, %v; want the value, nil", got, err)
	}

	tests := []struct {
		env      string
		wantName string
	}{
		{env: "WA_TOKEN_FRESH", wantName: "WA_TOKEN_FRESH"},
		{env: "", wantName: "no token variable"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			v, err := f.Token(tt.env)
			if err == nil {
				t.Fatalf("Token(%q) = %q, want an error", tt.env, v)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantName) {
				t.Errorf("error %q does not name %q", msg, tt.wantName)
			}
			for _, val := range env {
				if strings.Contains(msg, val) {
					t.Errorf("error %q contains a token value", msg)
				}
			}
		})
	}
}

// TestDatabaseLocationErrors: a --db or WASEND_DB in a directory that does
// not exist is an error naming it (a typo must not create directories),
// the default location is created, and a database that can't be written
// says which file or directory and why.
func TestDatabaseLocationErrors(t *testing.T) {
	dir := t.TempDir()
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	lockedFile := filepath.Join(dir, "locked.db")
	if err := os.WriteFile(lockedFile, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		db      string
		env     map[string]string
		want    []string // in the error; nil: no error
		created string   // a file that must exist afterwards
	}{
		{name: "--db in a missing directory", db: filepath.Join(dir, "typo", "w.db"),
			want: []string{filepath.Join(dir, "typo"), "does not exist"}},
		{name: "WASEND_DB in a missing directory", env: map[string]string{"WASEND_DB": filepath.Join(dir, "gone", "w.db")},
			want: []string{filepath.Join(dir, "gone"), "does not exist"}},
		{name: "--db naming a directory", db: dir, want: []string{"is a directory"}},
		{name: "default location is created", env: map[string]string{"XDG_DATA_HOME": filepath.Join(dir, "xdg")},
			created: filepath.Join(dir, "xdg", "wasend", "wasend.db")},
		{name: "--db in a read-only directory", db: filepath.Join(readOnly, "w.db"),
			want: []string{readOnly, "is not writable"}},
		{name: "--db on a read-only file", db: lockedFile,
			want: []string{lockedFile, "can't be opened for writing", "owner and mode"}},
	}
	if os.Geteuid() == 0 {
		tests = tests[:4] // root writes anywhere
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"WASEND_TZ": "UTC", "HOME": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			// As a command that sets up: one that only reads fails on a
			// missing file before any of these (TestSetsUpNamesCommands).
			f := &Factory{DBPath: tt.db, Getenv: mapEnv(env), Now: time.Now, setsUp: true}
			st, err := f.Store(t.Context())
			if err == nil {
				st.Close()
			}
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(tt.created); err != nil {
					t.Errorf("default database not created: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("opened; want an error with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); err == nil {
		t.Error("the missing directory was created")
	}
}

// TestSetsUpNamesCommands: every command that may create a database is a
// command of the tree, and a command of each kind behaves so in-process:
// one that sets up creates the file, one that reads fails on none.
func TestSetsUpNamesCommands(t *testing.T) {
	root := NewRootCmd(&Factory{IO: ui.Test(io.Discard, io.Discard), Getenv: mapEnv(nil), Now: time.Now})
	for path := range setsUp {
		c, _, err := root.Find(strings.Fields(path)[1:])
		if err != nil || c.CommandPath() != path {
			t.Errorf("setsUp names %q, not a command (found %v, %v)", path, c, err)
		}
	}

	c := newCLI(t)
	if _, _, err := c.run("campaign", "list"); err == nil || !strings.Contains(err.Error(), c.db+" does not exist (named by --db)") {
		t.Errorf("campaign list on no database: %v", err)
	}
	if _, err := os.Stat(c.db); err == nil {
		t.Fatalf("campaign list created %s", c.db)
	}
	c.ok("tier", "set", "new", "--daily-cap", "40")
	c.ok("campaign", "list")
}
