package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// decodeSuccess reads what Send keeps of a 2xx answer
// (docs/cloud-api.md#success-answer):
// exactly what json.Unmarshal into successBody (in the tests) would give,
// without its reflection. It runs for every message sent, and
// json.Unmarshal cost about as much as building the request and posting
// it.
//
// The body is checked with json.Valid first, so the reader below only
// ever walks well-formed JSON. Where json.Unmarshal has quirks (keys
// matched regardless of case, the last of duplicate keys winning, a null
// leaving a value as it was, a repeated array decoded over the elements of
// the previous one), this follows them: FuzzDecodeSuccess holds the two
// to the same answers.
func decodeSuccess(data []byte) (successFields, error) {
	if f, ok := decodeUsual(data); ok {
		return f, nil
	}
	var f successFields
	if !json.Valid(data) {
		return f, errMalformed
	}
	r := jsonReader{b: data}
	r.space()
	if r.peek() != '{' {
		if r.literal() { // null: nothing decoded
			return f, nil
		}
		return f, errShape
	}
	err := r.object(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("messages")):
			return r.array(&f.messages, func() { f.id, f.status = "", "" }, func(first bool) error {
				return r.object(func(key []byte) error {
					switch {
					case bytes.EqualFold(key, []byte("id")):
						return r.stringInto(&f.id, first)
					case bytes.EqualFold(key, []byte("message_status")):
						return r.stringInto(&f.status, first)
					}
					r.skip()
					return nil
				})
			})
		case bytes.EqualFold(key, []byte("contacts")):
			return r.array(&f.contacts, func() { f.waID = "" }, func(first bool) error {
				return r.object(func(key []byte) error {
					switch {
					case bytes.EqualFold(key, []byte("wa_id")):
						return r.stringInto(&f.waID, first)
					case bytes.EqualFold(key, []byte("input")):
						// Not kept, but json.Unmarshal fails on an input
						// that isn't a string, so this does too.
						var ignored string
						return r.stringInto(&ignored, false)
					}
					r.skip()
					return nil
				})
			})
		}
		r.skip()
		return nil
	})
	return f, err
}

// decodeUsual reads the answer the Cloud API gives to nearly every send,
// laid out as it writes it (docs/cloud-api.md#success-answer):
//
//	{"messaging_product":"whatsapp","contacts":[{"input":"…","wa_id":"…"}],"messages":[{"id":"…","message_status":"…"}]}
//
// message_status may be missing, whitespace may follow, and every string
// is plain (printable ASCII, no escapes). Such a body is valid JSON that
// json.Unmarshal reads to exactly these fields, so neither json.Valid's
// scan nor the reader's walk is needed: they were most of the cost of a
// 2xx. Anything else is not ok, for decodeSuccess to read in full.
func decodeUsual(b []byte) (f successFields, ok bool) {
	u := usual{b: b, ok: true}
	u.lit(`{"messaging_product":`)
	u.str()
	u.lit(`,"contacts":[{"input":`)
	u.str()
	u.lit(`,"wa_id":`)
	waID := u.str()
	u.lit(`}],"messages":[{"id":`)
	id := u.str()
	var status []byte
	if u.ok && bytes.HasPrefix(u.b, []byte(`,"message_status":`)) {
		u.lit(`,"message_status":`)
		status = u.str()
	}
	u.lit(`}]}`)
	if !u.ok || len(bytes.TrimLeft(u.b, " \t\n\r")) > 0 {
		return f, false
	}
	// One string of the three: one allocation where a string each was
	// three (a concatenation of conversions would convert each first).
	var sb strings.Builder
	sb.Grow(len(id) + len(waID) + len(status))
	sb.Write(id)
	sb.Write(waID)
	sb.Write(status)
	all := sb.String()
	one := sliceState{n: 1, alloc: true}
	return successFields{messages: one, contacts: one, id: all[:len(id)],
		waID: all[len(id) : len(id)+len(waID)], status: all[len(id)+len(waID):]}, true
}

// usual walks the usual answer; ok turns false at the first byte that is
// not where decodeUsual expects it.
type usual struct {
	b  []byte
	ok bool
}

// lit consumes s.
func (u *usual) lit(s string) {
	if u.ok = u.ok && bytes.HasPrefix(u.b, []byte(s)); u.ok {
		u.b = u.b[len(s):]
	}
}

// str consumes a plain string and returns its contents.
func (u *usual) str() []byte {
	if !u.ok || len(u.b) == 0 || u.b[0] != '"' {
		u.ok = false
		return nil
	}
	for i := 1; i < len(u.b); i++ {
		switch c := u.b[i]; {
		case c == '"':
			v := u.b[1:i]
			u.b = u.b[i+1:]
			return v
		case c < 0x20 || c > 0x7e || c == '\\':
			u.ok = false
			return nil
		}
	}
	u.ok = false
	return nil
}

// successFields is what decodeSuccess keeps: the first message and contact
// of the answer, and how long each list was.
type successFields struct {
	messages, contacts sliceState
	id, status, waID   string
}

// sliceState mirrors a decoded slice: its length, and whether it has a
// backing array. json.Unmarshal decodes a repeated array over the old
// elements, but a null or an empty array drops them, and the next first
// element starts from zero.
type sliceState struct {
	n     int
	alloc bool
}

var (
	errMalformed = errors.New("not valid JSON")
	errShape     = errors.New("unexpected JSON type")
)

// jsonReader walks valid JSON.
type jsonReader struct {
	b []byte
	i int
}

func (r *jsonReader) space() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\t' || r.b[r.i] == '\n' || r.b[r.i] == '\r') {
		r.i++
	}
}

func (r *jsonReader) peek() byte {
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// literal consumes null and reports whether it was there.
func (r *jsonReader) literal() bool {
	if bytes.HasPrefix(r.b[r.i:], []byte("null")) {
		r.i += 4
		r.space()
		return true
	}
	return false
}

// object calls field for each key of the object at r, positioned at its
// value. A null object calls nothing; any other value is errShape.
// (json.Unmarshal goes on decoding after a type error and reports it at
// the end; this reader stops, since the answer is an error either way.)
func (r *jsonReader) object(field func(key []byte) error) error {
	r.space()
	if r.literal() {
		return nil
	}
	if r.peek() != '{' {
		return errShape
	}
	r.i++
	r.space()
	if r.peek() == '}' {
		r.i++
		r.space()
		return nil
	}
	for {
		r.space()
		key, err := r.key()
		if err != nil {
			return err
		}
		r.space()
		r.i++ // ':'
		r.space()
		if err := field(key); err != nil {
			return err
		}
		r.space()
		if r.peek() == ',' {
			r.i++
			continue
		}
		r.i++ // '}'
		r.space()
		return nil
	}
}

// array walks the array at r, calling elem for each element (first for
// index 0), and keeps s as json.Unmarshal keeps a slice: zero runs before
// a first element decoded into a new backing array.
func (r *jsonReader) array(s *sliceState, zero func(), elem func(first bool) error) error {
	r.space()
	if r.literal() {
		*s = sliceState{}
		return nil
	}
	if r.peek() != '[' {
		return errShape
	}
	r.i++
	r.space()
	n := 0
	if r.peek() != ']' {
		for {
			if n == 0 && !s.alloc {
				zero()
			}
			if err := elem(n == 0); err != nil {
				return err
			}
			n++
			r.space()
			if r.peek() == ',' {
				r.i++
				continue
			}
			break
		}
	}
	r.i++ // ']'
	r.space()
	*s = sliceState{n: n, alloc: n > 0}
	return nil
}

// stringInto reads a string (or null, which changes nothing) into *dst
// when keep is set.
func (r *jsonReader) stringInto(dst *string, keep bool) error {
	r.space()
	if r.literal() {
		return nil
	}
	if r.peek() != '"' {
		return errShape
	}
	start := r.i
	raw := r.str()
	if !keep {
		return nil
	}
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		*dst = string(raw)
		return nil
	}
	// Escapes or invalid UTF-8: let encoding/json say what it means.
	return json.Unmarshal(r.b[start:r.i], dst)
}

// key consumes an object key and returns it unescaped.
func (r *jsonReader) key() ([]byte, error) {
	start := r.i
	raw := r.str()
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, nil
	}
	var k string
	if err := json.Unmarshal(r.b[start:r.i], &k); err != nil {
		return nil, err
	}
	return []byte(k), nil
}

// str consumes a string and returns its raw contents, escapes and all.
func (r *jsonReader) str() []byte {
	r.i++ // '"'
	start := r.i
	for r.b[r.i] != '"' {
		if r.b[r.i] == '\\' {
			r.i++
		}
		r.i++
	}
	r.i++
	return r.b[start : r.i-1]
}

// skip consumes any value.
func (r *jsonReader) skip() {
	r.space()
	switch r.peek() {
	case '"':
		r.str()
	case '{', '[':
		depth := 0
		for {
			switch r.b[r.i] {
			case '"':
				r.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.i++
			if depth == 0 {
				break
			}
		}
	default: // number, true, false, null
		for r.i < len(r.b) && strings.IndexByte(",}] \t\n\r", r.b[r.i]) < 0 {
			r.i++
		}
	}
	r.space()
}
