package ui

import (
	"bytes"
	"testing"
)

func TestTable(t *testing.T) {
	rows := [][]string{
		{"main-01", "active", "1/5s"},
		{"fresh-02", "new", "1/12s"},
		{"x", "", "20/s"},
	}
	tests := []struct {
		name string
		tty  bool
		rows [][]string
		want string
	}{
		{
			name: "tty: aligned under a header",
			tty:  true,
			rows: rows,
			want: "NAME      TIER    RATE\n" +
				"main-01   active  1/5s\n" +
				"fresh-02  new     1/12s\n" +
				"x                 20/s\n",
		},
		{
			name: "piped: tab-separated, no header",
			rows: rows,
			want: "main-01\tactive\t1/5s\n" +
				"fresh-02\tnew\t1/12s\n" +
				"x\t\t20/s\n",
		},
		{
			name: "piped: control characters escaped, a row a line",
			rows: [][]string{{"a\tb\nc", "x\x1b[31my\u0085", "1/5s"}},
			want: "a\\tb\\nc\tx\\x1b[31my\\u0085\t1/5s\n",
		},
		{
			name: "tty: control characters escaped, colours kept",
			tty:  true,
			rows: [][]string{{"a\tb", "\x1b[31mred\x1b[0m\r", "1/5s"}},
			want: "NAME  TIER   RATE\n" +
				"a\\tb  \x1b[31mred\x1b[0m\\r  1/5s\n",
		},
		{name: "tty, no rows: the header alone", tty: true, want: "NAME  TIER  RATE\n"},
		{name: "piped, no rows: nothing", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			s := Test(&out, &errOut)
			s.SetTTY(tt.tty, false)
			tb := NewTable(s, "NAME", "TIER", "RATE")
			for _, r := range tt.rows {
				tb.Row(r...)
			}
			if err := tb.Render(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tt.want {
				t.Errorf("Render:\n%q\nwant:\n%q", got, tt.want)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q, want nothing", errOut.String())
			}
		})
	}
}

// The table follows stdout's terminal-ness, not stderr's.
func TestTableFollowsStdout(t *testing.T) {
	var out bytes.Buffer
	s := Test(&out, &bytes.Buffer{})
	s.SetTTY(false, true)
	tb := NewTable(s, "A", "B")
	tb.Row("1", "2")
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "1\t2\n" {
		t.Errorf("stdout piped, stderr a TTY: %q, want %q", got, "1\t2\n")
	}
}

// On a terminal too narrow for the table, truncatable columns shrink to a
// comfortable width first, then optional columns go (the first named
// first), then truncatable columns shrink further; fixed columns are never
// cut. Piped output keeps every column whole at any width.
func TestTableFitsWidth(t *testing.T) {
	header := []string{"ID", "NAME", "STATE", "TOTAL", "STARTED", "ETA"}
	rows := [][]string{
		{"1", "spring-sale-customers-2026-final.csv", "waiting for quota", "1200", "11-30 14:01", "about 2 d 4 h"},
		{"12", "b.csv", "finished", "40", "11-30 09:00", "-"},
	}
	tests := []struct {
		width int
		tty   bool
		want  string
	}{
		{width: 0, tty: true, want: "" +
			"ID  NAME                                  STATE              TOTAL  STARTED      ETA\n" +
			"1   spring-sale-customers-2026-final.csv  waiting for quota  1200   11-30 14:01  about 2 d 4 h\n" +
			"12  b.csv                                 finished           40     11-30 09:00  -\n"},
		{width: 80, tty: true, want: "" +
			"ID  NAME                    STATE              TOTAL  STARTED      ETA\n" +
			"1   spring-sale-customers…  waiting for quota  1200   11-30 14:01  about 2 d 4 h\n" +
			"12  b.csv                   finished           40     11-30 09:00  -\n"},
		{width: 60, tty: true, want: "" +
			"ID  NAME             STATE              TOTAL  ETA\n" +
			"1   spring-sale-cu…  waiting for quota  1200   about 2 d 4 h\n" +
			"12  b.csv            finished           40     -\n"},
		{width: 40, tty: true, want: "" +
			"ID  NAME    STATE              TOTAL  ETA\n" +
			"1   sprin…  waiting for quota  1200   about 2 d 4 h\n" +
			"12  b.csv   finished           40     -\n"},
		{width: 40, want: "" +
			"1\tspring-sale-customers-2026-final.csv\twaiting for quota\t1200\t11-30 14:01\tabout 2 d 4 h\n" +
			"12\tb.csv\tfinished\t40\t11-30 09:00\t-\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		s := Test(&out, &bytes.Buffer{})
		s.SetTTY(tt.tty, false)
		s.SetWidth(tt.width)
		if tt.width == 0 {
			s.SetWidth(-1)
		}
		tb := NewTable(s, header...).Truncate("NAME").Optional("STARTED")
		for _, r := range rows {
			tb.Row(r...)
		}
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != tt.want {
			t.Errorf("width %d tty %v:\n%s\nwant:\n%s", tt.width, tt.tty, got, tt.want)
		}
	}
}

// TestTableTruncateLast: a row too wide for the terminal even with every
// Truncate column at its narrowest cuts a TruncateLast column rather than
// wrapping (a wrapped line breaks every column under it); it is cut only
// then, and piped output keeps it whole.
func TestTableTruncateLast(t *testing.T) {
	header := []string{"ID", "NAME", "STATE", "TOTAL", "SENT", "PENDING", "FAILED", "UNKNOWN", "ETA"}
	row := []string{"1", "recipients.csv", "waiting for shared limits", "13", "0", "13", "0", "0", "at once"}
	tests := []struct {
		width int
		tty   bool
		want  string
	}{
		{width: 120, tty: true, want: "" +
			"ID  NAME            STATE                      TOTAL  SENT  PENDING  FAILED  UNKNOWN  ETA\n" +
			"1   recipients.csv  waiting for shared limits  13     0     13       0       0        at once\n"},
		{width: 80, tty: true, want: "" +
			"ID  NAME    STATE                  TOTAL  SENT  PENDING  FAILED  UNKNOWN  ETA\n" +
			"1   recip…  waiting for shared l…  13     0     13       0       0        at on…\n"},
		{width: 80, want: "1\trecipients.csv\twaiting for shared limits\t13\t0\t13\t0\t0\tat once\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		s := Test(&out, &bytes.Buffer{})
		s.SetTTY(tt.tty, false)
		s.SetWidth(tt.width)
		tb := NewTable(s, header...).Truncate("NAME", "ETA").TruncateLast("STATE")
		tb.Row(row...)
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != tt.want {
			t.Errorf("width %d tty %v:\n%s\nwant:\n%s", tt.width, tt.tty, got, tt.want)
		}
	}
}
