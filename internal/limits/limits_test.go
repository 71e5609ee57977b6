package limits

import "testing"

func TestNextDay(t *testing.T) {
	tests := []struct {
		cur, today string
		force      bool
		want       string
		changed    bool
		bad        bool
	}{
		{cur: "", today: "2026-03-02", want: "2026-03-02#1", changed: true},
		{cur: "", today: "2026-03-02", force: true, want: "2026-03-02#1", changed: true},
		{cur: "2026-03-02#1", today: "2026-03-02", want: "2026-03-02#1"},
		{cur: "2026-03-02#1", today: "2026-03-02", force: true, want: "2026-03-02#2", changed: true},
		{cur: "2026-03-02#7", today: "2026-03-03", want: "2026-03-03#8", changed: true},
		{cur: "2026-03-03#2", today: "2026-03-02", want: "2026-03-03#2"},
		{cur: "2026-03-03#2", today: "2026-03-02", force: true, want: "2026-03-03#3", changed: true},
		{cur: "2026-03-02", today: "2026-03-03", bad: true},
		{cur: "2026-03-02#0", today: "2026-03-03", bad: true},
		{cur: "2026-03-02#x", today: "2026-03-03", bad: true},
	}
	for _, tt := range tests {
		got, changed, err := NextDay(tt.cur, tt.today, tt.force)
		if tt.bad {
			if err == nil {
				t.Errorf("NextDay(%q) = %q, want an error", tt.cur, got)
			}
			continue
		}
		if err != nil || got != tt.want || changed != tt.changed {
			t.Errorf("NextDay(%q, %q, %v) = %q, %v, %v; want %q, %v", tt.cur, tt.today, tt.force, got, changed, err, tt.want, tt.changed)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"main-01", "fresh 02", "a:b", "número"} {
		if err := ValidName("account", ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a{b", "a}b", "tab\t", "nl\n", string(make([]byte, 201))} {
		if err := ValidName("account", bad); err == nil {
			t.Errorf("ValidName(%q) accepted", bad)
		}
	}
}
