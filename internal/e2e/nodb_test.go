package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestReadCommandsCreateNoDatabase runs the README's cron line, `wasend
// quota reset`, with cron's environment (HOME, PATH and nothing of
// wasend's) on a machine whose database is elsewhere, and the other
// commands that only read or maintain: each exits 1 naming the path and how
// it was chosen, and leaves no database (nor directory) behind. Only the
// commands that set up create one.
func TestReadCommandsCreateNoDatabase(t *testing.T) {
	w := newWorld(t, sandbox.Options{})
	home := filepath.Join(w.Dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cron := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SHELL=/bin/sh", "LOGNAME=wasend"}
	def := filepath.Join(home, ".local", "share", "wasend", "wasend.db")
	named := filepath.Join(w.Dir, "typo.db")
	absent := func(path string) {
		t.Helper()
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s exists after a command that only reads or maintains (%v)", path, err)
		}
	}

	for _, tt := range []struct {
		name string
		env  []string
		args []string
		want []string // in stderr
		path string   // that must not exist
	}{
		{"cron's quota reset", cron, []string{"quota", "reset"},
			[]string{def, "default database", "$HOME/.local/share/wasend", "neither --db nor WASEND_DB", "account add"}, filepath.Dir(def)},
		{"status", cron, []string{"status"}, []string{def}, filepath.Dir(def)},
		{"status --json", cron, []string{"status", "--json"}, []string{def}, filepath.Dir(def)},
		{"campaign list", cron, []string{"campaign", "list"}, []string{def}, filepath.Dir(def)},
		{"campaign show", cron, []string{"campaign", "show", "1"}, []string{def}, filepath.Dir(def)},
		{"--db", cron, []string{"--db", named, "quota", "reset"}, []string{named, "named by --db", "account add"}, named},
		{"WASEND_DB", append([]string{"WASEND_DB=" + named}, cron...), []string{"campaign", "retry", "1", "--unknown"},
			[]string{named, "named by WASEND_DB", "account add"}, named},
		{"the sandbox's", cron, []string{"--sandbox", "status"},
			[]string{filepath.Join(home, ".local", "share", "wasend", "sandbox.db"), "campaign run --sandbox"}, filepath.Dir(def)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := w.StartEnv(tt.env, tt.args...).Wait(t)
			if r.Code != 1 {
				t.Errorf("exit %d, want 1\n%s", r.Code, r)
			}
			for _, s := range append(tt.want, "does not exist") {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr does not say %q\n%s", s, r.Stderr)
				}
			}
			absent(tt.path)
		})
	}

	// The commands that set up create it where it was asked for.
	r := w.StartEnv(cron, "config", "set", "timezone", "UTC").Wait(t)
	if r.Code != 0 {
		t.Fatalf("config set on no database: %s", r)
	}
	if _, err := os.Stat(def); err != nil {
		t.Fatalf("config set created no database: %v", err)
	}
	if r := w.StartEnv(cron, "quota", "reset").Wait(t); r.Code != 0 {
		t.Errorf("quota reset once it exists: %s", r)
	}
	if r := w.StartEnv(cron, "--db", named, "account", "add", "main", "--phone-number-id", "1001").Wait(t); r.Code != 0 {
		t.Errorf("account add on no database: %s", r)
	}
	if r := w.StartEnv(cron, "--db", named, "status").Wait(t); r.Code != 0 {
		t.Errorf("status once account add made it: %s", r)
	}
}
