package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestJQExport(t *testing.T) {
	data := map[string]any{"b": 1.5, "a": []any{"x", nil, true}, "html": "<&>", "big": 1e21, "whole": 3.0, "empty": []any{}}
	for _, tt := range []struct{ expr, want string }{
		{".a[0]", "x\n"},
		{".a", "[\n  \"x\",\n  null,\n  true\n]\n"},
		{"{b, whole}", "{\n  \"b\": 1.5,\n  \"whole\": 3\n}\n"},
		{".html", "<&>\n"},
		{"[.html]", "[\n  \"<&>\"\n]\n"},
		{".big", "1e+21\n"},
		{".empty, {}", "[]\n{}\n"},
		{"nan, infinite", "null\n1.7976931348623157e+308\n"},
		{"empty", ""},
	} {
		q, err := ParseJQ(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		var out bytes.Buffer
		if err := q.Export(Test(&out, &out), data); err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if out.String() != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.expr, out.String(), tt.want)
		}
	}
}

func TestParseJQErrors(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{".[", `jq expression ".[": unexpected EOF at column 3`},
		{".a | )", `jq expression ".a | )": unexpected token ")" at column 6`},
		{"nosuch", `jq expression "nosuch": function not defined: nosuch/0`},
		{"$x", `jq expression "$x": variable not defined: $x`},
	} {
		_, err := ParseJQ(tt.expr)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseJQ(%q) = %v, want %q", tt.expr, err, tt.want)
		}
	}
}

func TestTimeAgo(t *testing.T) {
	for _, tt := range []struct {
		ago  time.Duration
		want string
	}{
		{-time.Second, "in the future"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{2 * time.Hour, "2 hours ago"},
		{24 * time.Hour, "1 day ago"},
		{45 * 24 * time.Hour, "1 month ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	} {
		if got := timeAgo(tt.ago); got != tt.want {
			t.Errorf("timeAgo(%v) = %q, want %q", tt.ago, got, tt.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	data := map[string]any{"obj": map[string]any{"k": 1.0}, "list": []any{1.0, "x"}, "when": "yesterday"}
	for _, tt := range []struct{ tpl, want string }{
		{`{{tablerow .obj}}`, "tablerow: cannot print map[string]interface {} as text"},
		{`{{pluck "k" .list}}`, `pluck "k": an element is not an object`},
		{`{{timeago .when}}`, `not an RFC 3339 time: "yesterday"`},
		{`{{color "pink" "x"}}`, `unknown style "pink"`},
	} {
		tp, err := ParseTemplate(tt.tpl)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = tp.Export(Test(&out, &out), data)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.tpl, err, tt.want)
		}
	}
}
