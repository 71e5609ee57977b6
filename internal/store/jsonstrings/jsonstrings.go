// Package jsonstrings writes and reads a message's parameters as the
// messages.params column holds them: a JSON array of strings, byte for
// byte what encoding/json writes and reads, without its reflection for the
// plain strings most parameters are (an import writes every row's, a claim
// reads every claimed row's).
package jsonstrings

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Append appends ss as a JSON array, byte for byte what json.Marshal
// writes (nil as []).
func Append(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		if plain(s) {
			b = append(b, '"')
			b = append(b, s...)
			b = append(b, '"')
			continue
		}
		q, _ := json.Marshal(s) // a string always marshals
		b = append(b, q...)
	}
	return append(b, ']')
}

// plain reports whether json.Marshal writes s unchanged between quotes:
// valid UTF-8 without control characters, '"', '\\', the HTML characters
// it escapes, or U+2028/U+2029.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			return false
		}
	}
	return utf8.ValidString(s)
}

// Parse reads a JSON array of strings as json.Unmarshal into a []string
// does (the same strings, the same errors: [] is empty, null nil). What
// Append writes for plain strings is read directly; anything else (an
// escape, a space, a control character, invalid UTF-8) by json.Unmarshal.
func Parse(s string) ([]string, error) {
	if out, ok := parsePlain(s); ok {
		return out, nil
	}
	var out []string
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// parsePlain reads s when it is `[`, plain strings between quotes
// separated by commas, and `]`, nothing else.
func parsePlain(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	rest := s[1 : len(s)-1]
	out := make([]string, 0, strings.Count(rest, ",")+1)
	for rest != "" {
		if rest[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		v := rest[1 : 1+end]
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] == '\\' {
				return nil, false
			}
		}
		if !utf8.ValidString(v) {
			return nil, false // json.Unmarshal writes U+FFFD for it
		}
		out = append(out, v)
		rest = rest[2+end:]
		if rest != "" {
			if rest[0] != ',' || len(rest) == 1 {
				return nil, false
			}
			rest = rest[1:]
		}
	}
	return out, true
}
