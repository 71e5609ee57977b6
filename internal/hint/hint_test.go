package hint

import "testing"

func TestQuote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/tmp/w.db", "/tmp/w.db"},
		{"redis://r:6379/0", "redis://r:6379/0"},
		{"", "''"},
		{"/tmp/my w's.db", `'/tmp/my w'\''s.db'`},
		{"$HOME/x", `'$HOME/x'`},
	} {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, tt := range []struct {
		f    Flags
		want string
	}{
		{Flags{}, ""},
		{Flags{DB: "/tmp/w.db", Sandbox: true}, " --db /tmp/w.db --sandbox"},
		{Flags{Limits: "redis://app:s3cret@r:6379/0"}, " --limits redis://app:xxxxx@r:6379/0"},
		{Flags{Limits: "redis://r:6379/0\x7f"}, ""}, // refused before any hint
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.f, got, tt.want)
		}
	}
}

// A note the shared claim stored ends its command with a placeholder; the
// reader's flags replace it, or words when the reader gave no limits URL.
func TestFill(t *testing.T) {
	note := "its accounts wait until `wasend quota reset --force --account a --limits URL` starts a quota day"
	for _, tt := range []struct {
		flags     string
		limitsSet bool
		want      string
	}{
		{" --db w.db --limits redis://r:6379/0", true,
			"its accounts wait until `wasend quota reset --force --account a --db w.db --limits redis://r:6379/0` starts a quota day"},
		{"", true, "its accounts wait until `wasend quota reset --force --account a` starts a quota day"},
		{" --db w.db", false,
			"its accounts wait until `wasend quota reset --force --account a --db w.db` (with --limits naming the shared Redis) starts a quota day"},
	} {
		if got := Fill(note, tt.flags, tt.limitsSet); got != tt.want {
			t.Errorf("Fill(%q, %v) =\n%q, want\n%q", tt.flags, tt.limitsSet, got, tt.want)
		}
	}
}
