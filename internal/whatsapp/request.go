package whatsapp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
)

// ErrInvalidRequest is wrapped by every error that rejects a Request before
// anything is sent. Such a row can never succeed as it is.
var ErrInvalidRequest = errors.New("invalid request")

// ErrNoCredentials is wrapped when the phone number id or token is missing:
// a configuration problem of the account, not of one row.
var ErrNoCredentials = errors.New("missing credentials")

// Limits the Cloud API enforces on request fields
// (docs/cloud-api.md#request-envelope, #callback-data).
const (
	maxTextBody     = 4096 // characters
	maxCallbackData = 512  // bytes
)

// Request is one message to send.
type Request struct {
	PhoneNumberID string
	Token         string // bearer token; never put in an error, log or String()
	// To is the recipient: E.164 with a leading '+', or a business-scoped
	// user id (campaign.IsBSUID), which goes in the body's recipient field.
	// Meta answers a BSUID in to with 200 and a message id and never
	// delivers it (docs/cloud-api.md#business-scoped-user-ids).
	To           string
	Template     *Template
	Text         string // plain text body, used when Template is nil
	CallbackData string // biz_opaque_callback_data, e.g. "wasend:c12:m345"
	// Marketing sends the template through the Marketing Messages API
	// (POST /{phone-number-id}/marketing_messages, the same body): for
	// marketing templates of an onboarded WABA only.
	Marketing bool
}

// String describes the request for logs; it leaves out the token on purpose.
func (r Request) String() string {
	kind := "text"
	if r.Template != nil {
		kind = "template " + r.Template.Name
	}
	return fmt.Sprintf("whatsapp request from %s to %s (%s)", r.PhoneNumberID, r.To, kind)
}

// Template is a template message with its parameters.
type Template struct {
	Name       string
	Lang       string // e.g. "en" or "en_US"
	BodyParams []string
	// BodyNames, when set, names each of BodyParams (one name per value):
	// the template was created with parameter_format NAMED and uses
	// {{name}} placeholders instead of {{1}}, {{2}}.
	BodyNames []string
	Header    *Header     // nil: no header parameter
	Buttons   []URLButton // parameters of the template's URL buttons
}

// Header is a template's header parameter. For Type "text" Value is the
// text; for "image", "document" and "video" a Value starting with http://
// or https:// is sent as the media link, anything else as a media id.
type Header struct {
	Type  string
	Value string
}

// URLButton is the dynamic suffix of the URL button at Index (0-based).
type URLButton struct {
	Index int
	Text  string
}

// The wire shapes of docs/cloud-api.md#request-envelope and
// #template-message. Field order is the order of Meta's examples so that
// previews read naturally.
type messageBody struct {
	MessagingProduct string        `json:"messaging_product"`
	RecipientType    string        `json:"recipient_type"`
	To               string        `json:"to,omitempty"`
	Recipient        string        `json:"recipient,omitempty"` // a business-scoped user id, never with To
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
	SubType    string      `json:"sub_type,omitempty"`
	Index      string      `json:"index,omitempty"` // a string on the wire: "0", "1", …
	Parameters []parameter `json:"parameters"`
}

// parameter is one template parameter: text (with a name for NAMED
// templates) or a media object under the key of its type.
type parameter struct {
	Type     string `json:"type"`
	Name     string `json:"parameter_name,omitempty"`
	Text     string `json:"text,omitempty"`
	Image    *media `json:"image,omitempty"`
	Document *media `json:"document,omitempty"`
	Video    *media `json:"video,omitempty"`
}

type media struct {
	Link string `json:"link,omitempty"`
	ID   string `json:"id,omitempty"`
}

type textBody struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

// BuildBody returns the exact JSON that Send posts for req.
func BuildBody(req Request) ([]byte, error) {
	w := wires.Get().(*wire)
	defer func() {
		*w = wire{} // holds none of req's strings while pooled
		wires.Put(w)
	}()
	if err := w.fill(req); err != nil {
		return nil, err
	}
	// '<', '>' and '&' stay readable in previews (no HTML escaping); the API
	// accepts either form.
	return appendMessage(make([]byte, 0, 512), &w.m), nil
}

// wires keeps the shapes BuildBody fills: nothing outlives a call but the
// bytes. (A wire points into itself, which keeps it off the stack.)
var wires = sync.Pool{New: func() any { return new(wire) }}

// wire is a message's wire shape with room for its parts: Send builds one
// for every message, and a template's body, its components and their
// parameters were an allocation each. Parts beyond the room are appended
// to the heap as before.
type wire struct {
	m        messageBody
	template templateBody
	text     textBody
	comps    [3]component // header, body, one button
	params   [4]parameter
	media    media
}

// fill checks req and sets w.m to its wire shape, which points into w.
func (w *wire) fill(req Request) error {
	var to, recipient string
	switch {
	case campaign.LooksLikeBSUID(req.To):
		if why := campaign.CheckBSUID(req.To); why != "" {
			return fmt.Errorf("%w: recipient %q: %s", ErrInvalidRequest, req.To, why)
		}
		recipient = req.To
	default:
		if err := validateTo(req.To); err != nil {
			return err
		}
		to = req.To
	}
	if len(req.CallbackData) > maxCallbackData {
		return fmt.Errorf("%w: callback data is %d bytes, the limit is %d", ErrInvalidRequest, len(req.CallbackData), maxCallbackData)
	}
	w.m = messageBody{
		MessagingProduct: "whatsapp",
		RecipientType:    "individual",
		To:               to,
		Recipient:        recipient,
		CallbackData:     req.CallbackData,
	}
	if t := req.Template; t != nil {
		if t.Name == "" || t.Lang == "" {
			return fmt.Errorf("%w: template needs a name and a language", ErrInvalidRequest)
		}
		w.m.Type = "template"
		w.template = templateBody{
			Name:     t.Name,
			Language: language{Code: t.Lang, Policy: "deterministic"},
		}
		w.m.Template = &w.template
		// Templates without variables must not carry an empty components list.
		components, err := w.components(t)
		if err != nil {
			return err
		}
		w.template.Components = components
	} else {
		if req.Text == "" {
			return fmt.Errorf("%w: neither a template nor a text body", ErrInvalidRequest)
		}
		if n := utf8.RuneCountInString(req.Text); n > maxTextBody {
			return fmt.Errorf("%w: text body is %d characters, the limit is %d", ErrInvalidRequest, n, maxTextBody)
		}
		w.m.Type = "text"
		w.text = textBody{Body: req.Text}
		w.m.Text = &w.text
	}
	return nil
}

// components returns t's header, body and button components in the order
// of Meta's examples, or nil when the template has no parameters.
func (w *wire) components(t *Template) ([]component, error) {
	out := w.comps[:0]
	params := w.params[:0]
	if h := t.Header; h != nil {
		if h.Value == "" {
			return nil, fmt.Errorf("%w: empty %s header parameter", ErrInvalidRequest, h.Type)
		}
		p := parameter{Type: h.Type}
		w.media = media{ID: h.Value}
		if strings.HasPrefix(h.Value, "https://") || strings.HasPrefix(h.Value, "http://") {
			w.media = media{Link: h.Value}
		}
		switch h.Type {
		case "text":
			p.Text = h.Value
		case "image":
			p.Image = &w.media
		case "document":
			p.Document = &w.media
		case "video":
			p.Video = &w.media
		default:
			return nil, fmt.Errorf("%w: header parameter type %q (want text, image, document or video)", ErrInvalidRequest, h.Type)
		}
		params = append(params, p)
		out = append(out, component{Type: "header", Parameters: params[len(params)-1:]})
	}
	if t.BodyNames != nil && len(t.BodyNames) != len(t.BodyParams) {
		return nil, fmt.Errorf("%w: %d body parameter names for %d values", ErrInvalidRequest, len(t.BodyNames), len(t.BodyParams))
	}
	if len(t.BodyParams) > 0 {
		first := len(params)
		for i, v := range t.BodyParams {
			p := parameter{Type: "text", Text: v}
			if t.BodyNames != nil {
				if t.BodyNames[i] == "" {
					return nil, fmt.Errorf("%w: body parameter %d has an empty name", ErrInvalidRequest, i+1)
				}
				p.Name = t.BodyNames[i]
			}
			params = append(params, p)
		}
		out = append(out, component{Type: "body", Parameters: params[first:]})
	}
	for _, b := range t.Buttons {
		if b.Index < 0 || b.Index > 9 {
			return nil, fmt.Errorf("%w: button index %d (want 0 to 9)", ErrInvalidRequest, b.Index)
		}
		if b.Text == "" {
			return nil, fmt.Errorf("%w: empty parameter of URL button %d", ErrInvalidRequest, b.Index)
		}
		params = append(params, parameter{Type: "text", Text: b.Text})
		out = append(out, component{Type: "button", SubType: "url", Index: strconv.Itoa(b.Index),
			Parameters: params[len(params)-1:]})
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// validateTo insists on '+' and digits only: without the '+', Meta prepends
// the sending number's country code, which can misdeliver (docs/cloud-api.md#phone-numbers).
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
