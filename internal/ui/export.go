package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/itchyny/gojq"
	"github.com/mattn/go-runewidth"
)

// Exporter prints a command's JSON value another way than as JSON: a jq
// filter (--jq) or a Go template (--template). It is given the value as a
// script piping --json would read it (see jsonValue). GitHub's gh
// (pkg/cmdutil/json_flags.go) is the model.
type Exporter interface {
	Export(s *IOStreams, data any) error
}

// jsonValue is v as decoded from its JSON: objects as map[string]any,
// arrays as []any and numbers as float64, as jq reads them.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var data any
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, err
	}
	return data, nil
}

// JQ is a compiled --jq filter.
type JQ struct {
	expr string
	code *gojq.Code
}

// ParseJQ compiles a jq expression; a bad one is an error that quotes it
// and says where it breaks.
func ParseJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("jq expression %q: %v at column %d", expr, err, pe.Offset-len(pe.Token)+1)
		}
		return nil, fmt.Errorf("jq expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(os.Environ))
	if err != nil {
		return nil, fmt.Errorf("jq expression %q: %w", expr, err)
	}
	return &JQ{expr: expr, code: code}, nil
}

// Export prints each result of the filter on its own line: a string raw
// (as gh and jq -r do), anything else as JSON indented like jq's, with
// object keys sorted.
func (q *JQ) Export(s *IOStreams, data any) error {
	iter := q.code.Run(data)
	for {
		v, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("jq expression %q: %w", q.expr, err)
		}
		if str, ok := v.(string); ok {
			if _, err := fmt.Fprintln(s.Out, str); err != nil {
				return err
			}
			continue
		}
		compact, err := gojq.Marshal(v)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := json.Indent(&b, compact, "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		if _, err := s.Out.Write(b.Bytes()); err != nil {
			return err
		}
	}
}

// Template is a compiled --template: Go's text/template over the JSON
// value, with gh's helpers (tablerow, tablerender, timeago, timefmt, join,
// pluck, color, autocolor, truncate).
type Template struct {
	tpl *template.Template
	// now is the instant timeago measures from.
	now func() time.Time
	// out and table are the streams and the pending tablerow rows of the
	// Export running.
	out   *IOStreams
	table *Table
}

// ParseTemplate compiles a template; timeago measures from time.Now until
// SetClock.
func ParseTemplate(text string) (*Template, error) {
	t := &Template{now: time.Now}
	funcs := template.FuncMap{
		"color":       t.color,
		"autocolor":   t.autocolor,
		"timefmt":     timefmt,
		"timeago":     t.timeago,
		"join":        join,
		"pluck":       pluck,
		"truncate":    truncate,
		"tablerow":    t.tableRow,
		"tablerender": t.tableRender,
	}
	tpl, err := template.New("--template").Funcs(funcs).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", text, err)
	}
	t.tpl = tpl
	return t, nil
}

// SetClock sets the clock timeago reads (the command's, so tests fix it).
func (t *Template) SetClock(now func() time.Time) { t.now = now }

// Export runs the template over data, then prints any table tablerow
// started and tablerender did not print.
func (t *Template) Export(s *IOStreams, data any) error {
	t.out, t.table = s, nil
	if err := t.tpl.Execute(s.Out, data); err != nil {
		return err
	}
	_, err := t.tableRender()
	return err
}

func (t *Template) tableRow(fields ...any) (string, error) {
	if t.table == nil {
		t.table = NewTable(t.out)
	}
	cells := make([]string, len(fields))
	for i, f := range fields {
		s, err := scalarText(f)
		if err != nil {
			return "", fmt.Errorf("tablerow: %w", err)
		}
		cells[i] = s
	}
	t.table.Row(cells...)
	return "", nil
}

func (t *Template) tableRender() (string, error) {
	if t.table == nil {
		return "", nil
	}
	tb := t.table
	t.table = nil
	return "", tb.Render()
}

// styles are the colours and looks color and autocolor know, as SGR codes.
var styles = map[string]string{
	"black": "30", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36", "white": "37",
	"bold": "1", "dim": "2", "italic": "3", "underline": "4",
}

// color wraps input in the style named ("red", "green+bold", …).
func (t *Template) color(style string, input any) (string, error) {
	s, err := scalarText(input)
	if err != nil {
		return "", err
	}
	var codes []string
	for _, name := range strings.Split(style, "+") {
		c, ok := styles[name]
		if !ok {
			return "", fmt.Errorf("color: unknown style %q (known: black, red, green, yellow, blue, magenta, cyan, white, bold, dim, italic, underline)", name)
		}
		codes = append(codes, c)
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[0m", nil
}

// autocolor is color on a terminal and plain text when piped.
func (t *Template) autocolor(style string, input any) (string, error) {
	if t.out != nil && t.out.IsStdoutTTY() {
		return t.color(style, input)
	}
	return scalarText(input)
}

func (t *Template) timeago(input any) (string, error) {
	at, ok, err := parseTime(input)
	if !ok || err != nil {
		return "", err
	}
	return timeAgo(t.now().Sub(at)), nil
}

func timefmt(layout string, input any) (string, error) {
	at, ok, err := parseTime(input)
	if !ok || err != nil {
		return "", err
	}
	return at.Format(layout), nil
}

// parseTime reads an RFC 3339 time; null or "" is no time (ok false).
func parseTime(input any) (time.Time, bool, error) {
	s, err := scalarText(input)
	if err != nil || s == "" {
		return time.Time{}, false, err
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("not an RFC 3339 time: %q", s)
	}
	return at, true, nil
}

func timeAgo(ago time.Duration) string {
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return strconv.Itoa(n) + " " + unit + "s ago"
	}
	switch {
	case ago < 0:
		return "in the future"
	case ago < time.Minute:
		return "just now"
	case ago < time.Hour:
		return plural(int(ago.Minutes()), "minute")
	case ago < 24*time.Hour:
		return plural(int(ago.Hours()), "hour")
	case ago < 30*24*time.Hour:
		return plural(int(ago.Hours())/24, "day")
	case ago < 365*24*time.Hour:
		return plural(int(ago.Hours())/24/30, "month")
	}
	return plural(int(ago.Hours())/24/365, "year")
}

func join(sep string, input []any) (string, error) {
	parts := make([]string, len(input))
	for i, v := range input {
		s, err := scalarText(v)
		if err != nil {
			return "", fmt.Errorf("join: %w", err)
		}
		parts[i] = s
	}
	return strings.Join(parts, sep), nil
}

// pluck is field's value in each object of input.
func pluck(field string, input []any) ([]any, error) {
	out := make([]any, 0, len(input))
	for _, v := range input {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("pluck %q: an element is not an object", field)
		}
		out = append(out, obj[field])
	}
	return out, nil
}

// truncate cuts input to width columns, ending with "…" when cut.
func truncate(width int, input any) (string, error) {
	s, err := scalarText(input)
	if err != nil {
		return "", err
	}
	return runewidth.Truncate(s, width, "…"), nil
}

// scalarText is a JSON scalar as text: a whole number without a decimal
// point, a fraction to two places, null as "" (gh's rules).
func scalarText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		if math.Trunc(v) == v {
			return strconv.FormatFloat(v, 'f', 0, 64), nil
		}
		return strconv.FormatFloat(v, 'f', 2, 64), nil
	case nil:
		return "", nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("cannot print %T as text (index or range it first)", v)
}
