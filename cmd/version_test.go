package cmd

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionLine: the release's ldflags win over Go's VCS stamp; without
// either the line says the commit is unknown rather than nothing.
func TestVersionLine(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/wasend/wasend", Version: "v0.0.0-20261201170000-0887461a2b3c"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0887461a2b3c4d5e6f708192a3b4c5d6e7f80912"},
			{Key: "vcs.time", Value: "2026-12-01T17:00:00Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	dirty := *stamped
	dirty.Settings = append([]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, stamped.Settings[:3]...)
	tests := []struct {
		name, version, commit string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"release", "v1.2.3", "fedcba9876543210fedcba9876543210fedcba98", stamped, "v1.2.3 (commit fedcba987654, 2026-12-01T17:00:00Z)"},
		{"go build in a clone", "", "", stamped, "v0.0.0-20261201170000-0887461a2b3c (commit 0887461a2b3c, 2026-12-01T17:00:00Z)"},
		{"changed tree", "", "", &dirty, "v0.0.0-20261201170000-0887461a2b3c (commit 0887461a2b3c+dirty, 2026-12-01T17:00:00Z)"},
		{"go install @version", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0 (commit unknown: built without VCS information)"},
		{"no stamp", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev (commit unknown: built without VCS information)"},
		{"no build info", "", "", nil, "dev (commit unknown: built without VCS information)"},
	}
	for _, tt := range tests {
		if got := versionLine(tt.version, tt.commit, tt.bi); got != tt.want {
			t.Errorf("%s: versionLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionFlag: --version and the version command print the same line.
func TestVersionFlag(t *testing.T) {
	c := newCLI(t)
	flag, cmd := c.ok("--version"), c.ok("version")
	if flag != cmd || !strings.HasPrefix(flag, "wasend ") || !strings.Contains(flag, "(commit ") {
		t.Errorf("--version = %q, version = %q", flag, cmd)
	}
}
