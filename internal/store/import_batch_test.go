package store

import (
	"encoding/json"
	"testing"
)

func TestAppendJSONStrings(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {""}, {"a", "b"}, {"ü ß 中"}, {`"`, `\`, "<>&", "\x01\n\t", "\u2028\u2029", "\xff"}} {
		want := string(must(json.Marshal(nonNil(ss))))
		if got := string(appendJSONStrings(nil, ss)); got != want {
			t.Errorf("appendJSONStrings(%q) = %s, want %s", ss, got, want)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
