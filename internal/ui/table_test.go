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
