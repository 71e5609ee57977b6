package whatsapp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// appendMessage appends m as JSON: byte for byte what encoding/json writes
// for it with HTML escaping off (the struct tags in request.go are the
// shape; TestAppendMessageMatchesEncoder holds the two together). Send
// builds a body for every message, and reflection made that cost about
// as much as the rest of preparing the request.
func appendMessage(b []byte, m *messageBody) []byte {
	b = append(b, `{"messaging_product":`...)
	b = appendString(b, m.MessagingProduct)
	b = append(b, `,"recipient_type":`...)
	b = appendString(b, m.RecipientType)
	if m.To != "" {
		b = append(b, `,"to":`...)
		b = appendString(b, m.To)
	}
	if m.Recipient != "" {
		b = append(b, `,"recipient":`...)
		b = appendString(b, m.Recipient)
	}
	b = append(b, `,"type":`...)
	b = appendString(b, m.Type)
	if t := m.Template; t != nil {
		b = append(b, `,"template":{"name":`...)
		b = appendString(b, t.Name)
		b = append(b, `,"language":{"code":`...)
		b = appendString(b, t.Language.Code)
		b = append(b, `,"policy":`...)
		b = appendString(b, t.Language.Policy)
		b = append(b, '}')
		if len(t.Components) > 0 {
			b = append(b, `,"components":[`...)
			for i := range t.Components {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendComponent(b, &t.Components[i])
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if x := m.Text; x != nil {
		b = append(b, `,"text":{"preview_url":`...)
		if x.PreviewURL {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
		b = append(b, `,"body":`...)
		b = appendString(b, x.Body)
		b = append(b, '}')
	}
	if m.CallbackData != "" {
		b = append(b, `,"biz_opaque_callback_data":`...)
		b = appendString(b, m.CallbackData)
	}
	return append(b, '}')
}

func appendComponent(b []byte, c *component) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type)
	if c.SubType != "" {
		b = append(b, `,"sub_type":`...)
		b = appendString(b, c.SubType)
	}
	if c.Index != "" {
		b = append(b, `,"index":`...)
		b = appendString(b, c.Index)
	}
	b = append(b, `,"parameters":`...)
	if c.Parameters == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range c.Parameters {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendParameter(b, &c.Parameters[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendParameter(b []byte, p *parameter) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type)
	if p.Name != "" {
		b = append(b, `,"parameter_name":`...)
		b = appendString(b, p.Name)
	}
	if p.Text != "" {
		b = append(b, `,"text":`...)
		b = appendString(b, p.Text)
	}
	for _, m := range [...]struct {
		key string
		m   *media
	}{{`,"image":`, p.Image}, {`,"document":`, p.Document}, {`,"video":`, p.Video}} {
		if m.m == nil {
			continue
		}
		b = append(b, m.key...)
		b = append(b, '{')
		sep := ""
		if m.m.Link != "" {
			b = append(b, `"link":`...)
			b = appendString(b, m.m.Link)
			sep = ","
		}
		if m.m.ID != "" {
			b = append(b, sep+`"id":`...)
			b = appendString(b, m.m.ID)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendString appends s as a JSON string. Most values need no escaping;
// the others are left to encoding/json, so every escape is its.
func appendString(b []byte, s string) []byte {
	if plainString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// plainString reports whether encoding/json, HTML escaping off, writes s
// unchanged between quotes: valid UTF-8 without control characters, '"',
// '\\', U+2028 or U+2029. Bodies are mostly printable ASCII, which one
// look-up a byte passes; the rest is checked from its first other byte.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainASCII[s[i]] {
			return plainRest(s[i:]) // s[i] starts a character: s[:i] is ASCII
		}
	}
	return true
}

// plainASCII holds the ASCII bytes encoding/json writes as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func plainRest(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\':
			return false
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			return false
		}
	}
	return utf8.ValidString(s)
}
