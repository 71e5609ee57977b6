package jsonstrings

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {""}, {"a", "b"}, {"ü ß 中"}, {`"`, `\`, "<>&", "\x01\n\t", "\u2028\u2029", "\xff"}} {
		want, err := json.Marshal(nonNil(ss))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Append(nil, ss)); got != string(want) {
			t.Errorf("Append(%q) = %s, want %s", ss, got, want)
		}
	}
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// Parse is held to json.Unmarshal: what Append writes, and texts it never
// writes (escapes, spaces, nulls, broken arrays), each read the same, or
// refused by both.
func TestParseMatchesUnmarshal(t *testing.T) {
	texts := []string{`[]`, `null`, `[""]`, `["a","b"]`, `["ü ß 中","<>&"]`, `["a\"b"]`, `["\u00fc"]`, `[ "a" ]`,
		`["a",]`, `[,"a"]`, `["a""b"]`, `["a"`, `"a"]`, `[`, ``, `[1]`, `["a",null]`, "[\"\x01\"]", "[\"\xff\"]",
		`["a"]x`, `{}`, `["a","b","c"]`, `["`, `[""""]`, `["a",,"b"]`}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "ü", `"`, `\`, ",", "[", "]", " ", "\x01", "\xff", "<", "\u2028"}
	for range 2000 {
		ss := make([]string, r.IntN(4))
		for i := range ss {
			for range r.IntN(5) {
				ss[i] += alphabet[r.IntN(len(alphabet))]
			}
		}
		texts = append(texts, string(Append(nil, ss)))
		if b := []byte(string(Append(nil, ss))); len(b) > 2 { // and a byte changed
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))][0]
			texts = append(texts, string(b))
		}
	}
	for _, s := range []string{`[]`, `[""]`, `["a","ü ß 中","<>&"]`} {
		if _, ok := parsePlain(s); !ok {
			t.Errorf("%s is read by json.Unmarshal, not directly", s)
		}
	}
	for _, s := range texts {
		got, err := Parse(s)
		var want []string
		werr := json.Unmarshal([]byte(s), &want)
		if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %q, %v; json.Unmarshal: %q, %v", s, got, err, want, werr)
		}
	}
}
