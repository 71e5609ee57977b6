package whatsapp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// encoded is the reference appendMessage must match: encoding/json with
// HTML escaping off, as BuildBody used it.
func encoded(t testing.TB, m *messageBody) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var awkward = []string{"", "Ann", "a\"b", `back\slash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f", "<b>&amp;</b>",
	"ünïcödé 中文 😀", "\u2028\u2029", "\xff\xfe broken", "https://x.test/a.png?x=1&y=2", "wasend:c1:m2"}

// Every shape of request, with values that need every kind of escape,
// encodes byte for byte as encoding/json encodes it.
func TestAppendMessageMatchesEncoder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	pick := func() string { return awkward[rnd.IntN(len(awkward))] }
	for i := range 5000 {
		req := Request{To: "+4915112345678", CallbackData: pick()}
		if i%7 == 3 {
			req.To = "US.13491208655302741918"
		}
		if i%5 == 0 {
			req.Text = pick() + "x"
		} else {
			tpl := &Template{Name: pick() + "t", Lang: "en_US"}
			for range rnd.IntN(4) {
				tpl.BodyParams = append(tpl.BodyParams, pick()+"v")
			}
			if i%3 == 0 && len(tpl.BodyParams) > 0 {
				for range tpl.BodyParams {
					tpl.BodyNames = append(tpl.BodyNames, pick()+"n")
				}
			}
			if i%4 == 1 {
				tpl.Header = &Header{Type: []string{"text", "image", "document", "video"}[rnd.IntN(4)], Value: pick() + "h"}
				if i%8 == 1 {
					tpl.Header.Value = "https://x.test/" + pick()
				}
			}
			for j := range rnd.IntN(3) {
				tpl.Buttons = append(tpl.Buttons, URLButton{Index: j, Text: pick() + "b"})
			}
			req.Template = tpl
		}
		m, err := message(req)
		if err != nil {
			continue // rejected requests never encode
		}
		if got, want := appendMessage(nil, &m), encoded(t, &m); !bytes.Equal(got, want) {
			t.Fatalf("request %+v:\nappendMessage %s\nencoding/json %s", req, got, want)
		}
		// BuildBody's pooled shapes carry nothing from one request to the next.
		if got, _ := BuildBody(req); !bytes.Equal(got, appendMessage(nil, &m)) {
			t.Fatalf("request %+v:\nBuildBody %s\nfresh     %s", req, got, appendMessage(nil, &m))
		}
	}
	// Shapes message never makes, which the encoder must still get right.
	for _, m := range []messageBody{
		{},
		{Template: &templateBody{Components: []component{{Type: "body"}}}},
		{Template: &templateBody{Components: []component{{Type: "header", Parameters: []parameter{{Type: "image", Image: &media{}}}}}}},
		{Template: &templateBody{Components: []component{{Parameters: []parameter{{Image: &media{Link: "l", ID: "i"}, Video: &media{ID: "v"}}}}}}},
		{Text: &textBody{PreviewURL: true, Body: "x"}},
	} {
		if got, want := appendMessage(nil, &m), encoded(t, &m); !bytes.Equal(got, want) {
			t.Errorf("%+v:\nappendMessage %s\nencoding/json %s", m, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := messageBody{To: s, Text: &textBody{Body: s}}
		if got, want := appendMessage(nil, &m), encoded(t, &m); !bytes.Equal(got, want) {
			t.Errorf("%q:\nappendMessage %s\nencoding/json %s", s, got, want)
		}
	})
}

func BenchmarkBuildBody(b *testing.B) {
	req := Request{To: "+4915112345678", CallbackData: "wasend:c1:m2",
		Template: &Template{Name: "spring_sale", Lang: "en_US", BodyParams: []string{"Ann", "C000123", "Berlin"}}}
	m, _ := message(req)
	b.Run("BuildBody", func(b *testing.B) {
		for range b.N {
			BuildBody(req)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for range b.N {
			encoded(b, &m)
		}
	})
}

// message returns req's wire shape as BuildBody encodes it.
func message(req Request) (messageBody, error) {
	w := new(wire)
	err := w.fill(req)
	return w.m, err
}
