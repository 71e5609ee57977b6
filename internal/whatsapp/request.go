package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidRequest is wrapped by every error that rejects a Request before
// anything is sent. Such a row can never succeed as it is.
var ErrInvalidRequest = errors.New("invalid request")

// ErrNoCredentials is wrapped when the phone number id or token is missing:
// a configuration problem of the account, not of one row.
var ErrNoCredentials = errors.New("missing credentials")

// Limits the Cloud API enforces on request fields (cloud-api.md §0, §1.5).
const (
	maxTextBody     = 4096 // characters
	maxCallbackData = 512  // bytes
)

// Request is one message to send.
type Request struct {
	PhoneNumberID string
	Token         string // bearer token; never put in an error, log or String()
	To            string // E.164 with a leading '+'
	Template      *Template
	Text          string // plain text body, used when Template is nil
	CallbackData  string // biz_opaque_callback_data, e.g. "wasend:c12:m345"
}

// String describes the request for logs; it leaves out the token on purpose.
func (r Request) String() string {
	kind := "text"
	if r.Template != nil {
		kind = "template " + r.Template.Name
	}
	return fmt.Sprintf("whatsapp request from %s to %s (%s)", r.PhoneNumberID, r.To, kind)
}

// Template is a positional template message.
type Template struct {
	Name       string
	Lang       string // e.g. "en" or "en_US"
	BodyParams []string
}

// The wire shapes of cloud-api.md §1.1–1.3. Field order is the order of
// Meta's examples so that previews read naturally.
type messageBody struct {
	MessagingProduct string        `json:"messaging_product"`
	RecipientType    string        `json:"recipient_type"`
	To               string        `json:"to"`
	Type             string        `json:"type"`
	Template         *templateBody `json:"template,omitempty"`
	Text             *textBody     `json:"text,omitempty"`
	CallbackData     string        `json:"biz_opaque_callback_data,omitempty"`
}

type templateBody struct {
	Name       string      `json:"name"`
	Language   language    `json:"language"`
	Components []component `json:"components,omitempty"`
}

type language struct {
	Code   string `json:"code"`
	Policy string `json:"policy"`
}

type component struct {
	Type       string      `json:"type"`
	Parameters []parameter `json:"parameters"`
}

type parameter struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type textBody struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

// BuildBody returns the exact JSON that Send posts for req.
func BuildBody(req Request) ([]byte, error) {
	if err := validateTo(req.To); err != nil {
		return nil, err
	}
	if len(req.CallbackData) > maxCallbackData {
		return nil, fmt.Errorf("%w: callback data is %d bytes, the limit is %d", ErrInvalidRequest, len(req.CallbackData), maxCallbackData)
	}
	m := messageBody{
		MessagingProduct: "whatsapp",
		RecipientType:    "individual",
		To:               req.To,
		CallbackData:     req.CallbackData,
	}
	if t := req.Template; t != nil {
		if t.Name == "" || t.Lang == "" {
			return nil, fmt.Errorf("%w: template needs a name and a language", ErrInvalidRequest)
		}
		m.Type = "template"
		m.Template = &templateBody{
			Name:     t.Name,
			Language: language{Code: t.Lang, Policy: "deterministic"},
		}
		// Templates without variables must not carry an empty components list.
		if len(t.BodyParams) > 0 {
			params := make([]parameter, len(t.BodyParams))
			for i, p := range t.BodyParams {
				params[i] = parameter{Type: "text", Text: p}
			}
			m.Template.Components = []component{{Type: "body", Parameters: params}}
		}
	} else {
		if req.Text == "" {
			return nil, fmt.Errorf("%w: neither a template nor a text body", ErrInvalidRequest)
		}
		if n := utf8.RuneCountInString(req.Text); n > maxTextBody {
			return nil, fmt.Errorf("%w: text body is %d characters, the limit is %d", ErrInvalidRequest, n, maxTextBody)
		}
		m.Type = "text"
		m.Text = &textBody{Body: req.Text}
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep '<', '>' and '&' readable in previews; the API accepts either form.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// validateTo insists on '+' and digits only: without the '+', Meta prepends
// the sending number's country code, which can misdeliver (cloud-api.md §1.6).
func validateTo(to string) error {
	if len(to) < 2 || to[0] != '+' {
		return fmt.Errorf("%w: recipient %q is not E.164 with a leading '+'", ErrInvalidRequest, to)
	}
	digits := to[1:]
	if len(digits) > 15 || digits[0] == '0' {
		return fmt.Errorf("%w: recipient %q is not a valid E.164 number", ErrInvalidRequest, to)
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: recipient %q is not E.164 (digits only after '+')", ErrInvalidRequest, to)
		}
	}
	return nil
}
