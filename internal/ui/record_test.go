package ui

import (
	"bytes"
	"testing"
)

func TestWriteRecord(t *testing.T) {
	tests := []struct {
		kind  string
		pairs []string
		want  string
	}{
		{"account", []string{"name", "main-01", "tokens", "15.0"}, "kind=account name=main-01 tokens=15.0\n"},
		{"campaign", []string{"state", "waiting for quota", "eta", ""}, `kind=campaign state="waiting for quota" eta=""` + "\n"},
		{"x", []string{"q", `say "hi"`, "eq", "a=b", "nl", "a\nb", "u", "über"}, `kind=x q="say \"hi\"" eq="a=b" nl="a\nb" u=über` + "\n"},
		{"global_limit", nil, "kind=global_limit\n"},
		{"odd", []string{"a", "1", "dangling"}, "kind=odd a=1\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteRecord(&b, tt.kind, tt.pairs...); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("WriteRecord(%q, %q) = %q, want %q", tt.kind, tt.pairs, b.String(), tt.want)
		}
	}
}

func TestRecordKey(t *testing.T) {
	for in, want := range map[string]string{
		"NAME": "name", "THROTTLED 1H/ALL": "throttled_1h_all", "SENT 24H": "sent_24h",
		"DELIVERED/SENT": "delivered_sent", "PHONE NUMBER ID": "phone_number_id", " ODD  ": "odd",
	} {
		if got := RecordKey(in); got != want {
			t.Errorf("RecordKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// A table with a Kind prints records only on streams from AsRecords and
// only when piped: on a terminal it is the aligned table, and on plain
// streams the tab-separated rows scripts of `campaign list` read.
func TestTableRecords(t *testing.T) {
	tests := []struct {
		name    string
		records bool
		tty     bool
		want    string
	}{
		{"records, piped", true, false, "" +
			"kind=account name=main-01 tier=active last_error=\"\" rate=\"1 every 5 s\"\n" +
			"kind=account name=\"a\\tb\" tier=new last_error=131050 rate=20/s\n"},
		{"records, on a terminal: the table", true, true, "" +
			"NAME     TIER    LAST ERROR  RATE\n" +
			"main-01  active              1 every 5 s\n" +
			"a\\tb     new     131050      20/s\n"},
		{"plain streams, piped: tab-separated", false, false, "" +
			"main-01\tactive\t\t1 every 5 s\n" +
			"a\\tb\tnew\t131050\t20/s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := Test(&out, &bytes.Buffer{})
			s.SetTTY(tt.tty, false)
			if tt.records {
				s = s.AsRecords()
			}
			tb := NewTable(s, "NAME", "TIER", "LAST ERROR", "RATE").Kind("account")
			tb.Row("main-01", "active", "", "1 every 5 s")
			tb.Row("a\tb", "new", "131050", "20/s")
			if err := tb.Render(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tt.want)
			}
		})
	}
}
