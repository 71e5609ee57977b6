package webhook

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Inbound messages: the messages[] (and contacts[]) of a messages webhook,
// and the user_preferences field. The shapes are those of
// docs/cloud-api.md#inbound-messages. A message wasend cannot read — a type
// it does not know, a field of another shape, a timestamp that is not a
// number — is kept as it came and counted, never refused: the rest of the
// body applies.

type inboundValue struct {
	Metadata struct {
		PhoneNumberID string `json:"phone_number_id"`
	} `json:"metadata"`
	Contacts []struct {
		WAID    string `json:"wa_id"`   // left out for a person with a username whose number Meta hides
		UserID  string `json:"user_id"` // the business-scoped user id
		Profile struct {
			Name string `json:"name"`
		} `json:"profile"`
	} `json:"contacts"`
	Messages        []json.RawMessage `json:"messages"`
	UserPreferences []json.RawMessage `json:"user_preferences"`
}

// inboundMessage is one messages[] entry, the fields wasend reads.
type inboundMessage struct {
	From       string          `json:"from"`
	FromUserID string          `json:"from_user_id"`
	ID         string          `json:"id"`
	Timestamp  json.RawMessage `json:"timestamp"`
	Type       string          `json:"type"`
	Context    *struct {
		ID string `json:"id"`
	} `json:"context"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
	Button *struct {
		Payload string `json:"payload"`
		Text    string `json:"text"`
	} `json:"button"`
	Interactive *struct {
		Type        string `json:"type"`
		ButtonReply *reply `json:"button_reply"`
		ListReply   *reply `json:"list_reply"`
		NFMReply    *struct {
			Body string `json:"body"`
			Name string `json:"name"`
		} `json:"nfm_reply"`
	} `json:"interactive"`
	Reaction *struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
	} `json:"reaction"`
	Location *struct {
		Name    string `json:"name"`
		Address string `json:"address"`
	} `json:"location"`
	System *struct {
		Type      string `json:"type"`
		Body      string `json:"body"`
		Marketing string `json:"marketing"`
	} `json:"system"`
}

type reply struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type media struct {
	ID       string `json:"id"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
}

// mediaTypes carry {id, mime_type, sha256, caption?, filename?} under
// their own name.
var mediaTypes = map[string]bool{"image": true, "video": true, "audio": true, "document": true, "sticker": true}

// plainTypes are read without a field of their own: the message is kept
// with its type, sender and time.
var plainTypes = map[string]bool{"contacts": true, "order": true, "unsupported": true}

// decodeInbound adds the inbound messages and marketing preferences of one
// messages or user_preferences value to n.
func decodeInbound(raw json.RawMessage, n *campaign.Notification) {
	var v inboundValue
	if err := json.Unmarshal(raw, &v); err != nil {
		return // statuses decoding reports a value that is not an object
	}
	names := map[string]string{}
	users := map[string]string{} // wa_id → user_id
	for _, c := range v.Contacts {
		names[c.WAID] = c.Profile.Name
		if c.UserID != "" {
			names[c.UserID] = c.Profile.Name
			if c.WAID != "" {
				users[c.WAID] = c.UserID
			}
		}
		if l, ok := link(c.WAID, c.UserID); ok {
			n.Links = append(n.Links, l)
		}
	}
	for _, m := range v.Messages {
		// Without from or from_user_id, the one sender the contacts name.
		var sender string
		if len(v.Contacts) == 1 {
			sender = v.Contacts[0].UserID
		}
		in := readInbound(m, sender)
		in.PhoneNumberID = v.Metadata.PhoneNumberID
		if in.UserID == "" && in.From != "" {
			in.UserID = users[in.From]
		}
		if in.From != "" {
			in.Name = names[in.From]
		} else {
			in.Name = names[in.UserID]
		}
		n.Inbound = append(n.Inbound, in)
	}
	for _, p := range v.UserPreferences {
		var u struct {
			WAID      string          `json:"wa_id"`
			Category  string          `json:"category"`
			Value     string          `json:"value"`
			Detail    string          `json:"detail"`
			Timestamp json.RawMessage `json:"timestamp"`
		}
		in := campaign.InboundMessage{Type: "user_preferences", PhoneNumberID: v.Metadata.PhoneNumberID, Raw: string(p)}
		if err := json.Unmarshal(p, &u); err != nil || u.WAID == "" {
			in.Unknown = true
			n.Inbound = append(n.Inbound, in)
			continue
		}
		in.From, in.Name = u.WAID, names[u.WAID]
		at, ok := unixSeconds(u.Timestamp)
		in.At, in.Unknown = at, !ok || u.Category != "marketing_messages"
		in.Payload, in.Text = u.Value, u.Detail
		// No message id: one preference change per person and second.
		in.WAMID = fmt.Sprintf("user_preferences:%s:%s:%d", u.WAID, u.Value, at.Unix())
		n.Inbound = append(n.Inbound, in)
	}
}

// readInbound reads one messages[] entry; what it cannot read is Unknown
// with the entry kept in Raw. sender is the user id the body's contacts
// give for an entry that names no sender itself ("" when they don't).
func readInbound(raw json.RawMessage, sender string) campaign.InboundMessage {
	in := campaign.InboundMessage{Raw: string(raw)}
	var m inboundMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		// A known field of another shape: read what the envelope says.
		var e struct {
			From string `json:"from"`
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &e)
		in.From, in.WAMID, in.Type, in.Unknown = e.From, e.ID, e.Type, true
		return in
	}
	in.From, in.WAMID, in.Type = strings.TrimPrefix(m.From, "+"), m.ID, m.Type
	if campaign.IsBSUID(in.From) {
		in.From, in.UserID = "", in.From // a user id in from: not a number
	}
	if m.FromUserID != "" {
		in.UserID = m.FromUserID
	}
	if in.From == "" && in.UserID == "" {
		in.UserID = sender
	}
	at, ok := unixSeconds(m.Timestamp)
	in.At = at
	if m.Context != nil {
		in.ContextID = m.Context.ID
	}
	known := true
	switch {
	case m.Type == "text" && m.Text != nil:
		in.Text = m.Text.Body
	case m.Type == "button" && m.Button != nil:
		in.Text, in.Payload = m.Button.Text, m.Button.Payload
	case m.Type == "interactive" && m.Interactive != nil:
		switch i := m.Interactive; {
		case i.ButtonReply != nil:
			in.Text, in.Payload = i.ButtonReply.Title, i.ButtonReply.ID
		case i.ListReply != nil:
			in.Text, in.Payload = i.ListReply.Title, i.ListReply.ID
		case i.NFMReply != nil:
			in.Text, in.Payload = i.NFMReply.Body, i.NFMReply.Name
		default:
			known = false
		}
	case m.Type == "reaction" && m.Reaction != nil:
		in.Text, in.ContextID = m.Reaction.Emoji, m.Reaction.MessageID
	case m.Type == "location" && m.Location != nil:
		in.Text = strings.TrimSpace(m.Location.Name + " " + m.Location.Address)
	case m.Type == "system" && m.System != nil:
		in.Text, in.Payload = m.System.Body, m.System.Marketing
		known = m.System.Type == "user_preference_changed" || m.System.Type == "customer_changed_number" ||
			m.System.Type == "customer_identity_changed"
	case mediaTypes[m.Type]:
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		var md media
		if err := json.Unmarshal(body[m.Type], &md); err != nil {
			known = false
			break
		}
		in.Text, in.Payload = md.Caption, md.ID
		if in.Text == "" {
			in.Text = md.Filename
		}
	default:
		known = plainTypes[m.Type]
	}
	in.Unknown = !known || !ok || in.From == "" && in.UserID == "" || in.WAMID == ""
	if !in.Unknown {
		in.Raw = ""
	}
	return in
}

// unixSeconds reads a webhook timestamp, a string of Unix seconds (or a
// number, as user_preferences sends it).
func unixSeconds(raw json.RawMessage) (time.Time, bool) {
	s := strings.Trim(string(raw), `"`)
	secs, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}
