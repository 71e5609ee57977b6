package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// titles are the Graph error titles the sandbox answers with. Clients must
// not parse them (docs/cloud-api.md#error-envelope); they are here so logs
// read like Meta's.
var titles = map[int]string{
	0:      "AuthException",
	1:      "API Unknown",
	2:      "API Service",
	3:      "API Method",
	4:      "API Too Many Calls",
	10:     "API Permission Denied",
	33:     "Parameter value is not valid",
	100:    "Invalid parameter",
	190:    "Access token has expired",
	200:    "API Permission",
	368:    "Temporarily blocked for policies violations",
	80007:  "Rate limit issues",
	130403: "Recipient blocked by business",
	130429: "Rate limit hit",
	130472: "User's number is part of an experiment",
	130497: "Business account is restricted from messaging users in this country",
	131000: "Something went wrong",
	131005: "Access denied",
	131008: "Required parameter is missing",
	131009: "Parameter value is not valid",
	131016: "Service unavailable",
	131021: "Recipient cannot be sender",
	131026: "Message undeliverable",
	131030: "Recipient phone number not in allowed list",
	131031: "Account has been locked",
	131037: "WhatsApp provided number needs display name approval",
	131042: "Business eligibility payment issue",
	131045: "Incorrect certificate",
	131047: "Re-engagement message",
	131048: "Spam rate limit hit",
	131049: "This message was not delivered to maintain healthy ecosystem engagement.",
	131050: "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.",
	131051: "Unsupported message type",
	131052: "Media download error",
	131053: "Media upload error",
	131056: "(Business Account, Consumer Account) pair rate limit hit",
	131057: "Account in maintenance mode",
	131063: "Marketing messages are disabled on Cloud API for this business",
	131055: "Method not allowed",
	131064: "Messaging limit reached due to template classification violations",
	132000: "Number of parameters does not match the expected number of params",
	132001: "Template name does not exist in the translation",
	132005: "Translated text too long",
	132007: "Template Format Character Policy Violated",
	132012: "Parameter format does not match format in the created template",
	132015: "Template is Paused",
	132016: "Template is Disabled",
	133004: "Server Temporarily Unavailable",
	133010: "Phone number Not Registered",
}

func title(code int) string {
	if t, ok := titles[code]; ok {
		return t
	}
	return "Error"
}

// httpStatus follows the legacy table of docs/cloud-api.md#http-statuses;
// Meta no longer documents per-code statuses, and clients must classify by
// code anyway.
func httpStatus(code int) int {
	switch {
	case code == 0 || code == 190:
		return http.StatusUnauthorized
	case code == 10 || (code >= 200 && code <= 299) || code == 368 || code == 131031 || code == 131005:
		return http.StatusForbidden
	case code == 3 || code == 131000 || code == 131016 || code == 131045 || code == 131057:
		return http.StatusInternalServerError
	case code == 2 || code == 133004:
		return http.StatusServiceUnavailable
	case code == 132001:
		return http.StatusNotFound
	default:
		return http.StatusBadRequest
	}
}

// graphError is the envelope of docs/cloud-api.md#error-envelope.
type graphError struct {
	Error graphErrorBody `json:"error"`
}

type graphErrorBody struct {
	Message   string    `json:"message"`
	Type      string    `json:"type"`
	Code      int       `json:"code"`
	ErrorData errorData `json:"error_data"`
	FBTraceID string    `json:"fbtrace_id"`
}

type errorData struct {
	MessagingProduct string `json:"messaging_product"`
	Details          string `json:"details"`
}

func writeGraphError(w http.ResponseWriter, status, code int, details, traceID string, retryAfter time.Duration) {
	if retryAfter > 0 {
		secs := (retryAfter + time.Second - 1) / time.Second // round up: never invite an early retry
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	}
	if details == "" {
		details = title(code)
	}
	writeJSON(w, status, graphError{Error: graphErrorBody{
		Message:   fmt.Sprintf("(#%d) %s", code, title(code)),
		Type:      "OAuthException",
		Code:      code,
		ErrorData: errorData{MessagingProduct: "whatsapp", Details: details},
		FBTraceID: traceID,
	}})
}

// successBody is the answer of docs/cloud-api.md#success-answer.
type successBody struct {
	MessagingProduct string    `json:"messaging_product"`
	Contacts         []contact `json:"contacts"`
	Messages         []message `json:"messages"`
}

type contact struct {
	Input  string `json:"input"`
	WaID   string `json:"wa_id,omitempty"`   // a send to a number
	UserID string `json:"user_id,omitempty"` // a send to a business-scoped user id
}

type message struct {
	ID            string `json:"id"`
	MessageStatus string `json:"message_status"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The client may be gone; there is nobody to tell.
	_ = json.NewEncoder(w).Encode(v)
}

// inMessage is the part of a send request the sandbox checks.
type inMessage struct {
	MessagingProduct string `json:"messaging_product"`
	RecipientType    string `json:"recipient_type"`
	To               string `json:"to"`
	Recipient        string `json:"recipient"` // a business-scoped user id, sent to when to is absent
	Type             string `json:"type"`
	Template         *struct {
		Name     string `json:"name"`
		Language *struct {
			Code   string `json:"code"`
			Policy string `json:"policy"`
		} `json:"language"`
		Components []struct {
			Type       string `json:"type"`
			Parameters []struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			} `json:"parameters"`
		} `json:"components"`
	} `json:"template"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
	CallbackData string `json:"biz_opaque_callback_data"`
}

// requestError is a request the API would reject before looking at limits.
type requestError struct {
	code    int
	details string
}

func invalid(format string, args ...any) *requestError {
	return &requestError{code: 100, details: fmt.Sprintf(format, args...)}
}

// parseMessage decodes and checks a send request the way the Cloud API
// does, with details that say which field is wrong.
func parseMessage(body []byte) (inMessage, *requestError) {
	var m inMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return m, invalid("request body is not valid JSON: %v", err)
	}
	switch {
	case m.MessagingProduct == "":
		return m, invalid("missing required parameter messaging_product")
	case m.MessagingProduct != "whatsapp":
		return m, invalid("messaging_product must be \"whatsapp\", got %q", m.MessagingProduct)
	case m.RecipientType != "" && m.RecipientType != "individual":
		return m, invalid("recipient_type %q is not supported by the sandbox; use \"individual\"", m.RecipientType)
	case m.To == "" && m.Recipient == "":
		return m, invalid("missing required parameter to (or recipient, for a business-scoped user id)")
	case m.To == "" && !isUserID(m.Recipient):
		return m, invalid("parameter recipient %q is not a business-scoped user id", m.Recipient)
	case m.To != "" && waID(m.To) == "" && !isUserID(m.To):
		return m, invalid("parameter to %q is not a phone number", m.To)
	case len(m.CallbackData) > 512:
		return m, invalid("biz_opaque_callback_data is %d bytes, the limit is 512", len(m.CallbackData))
	}
	switch m.Type {
	case "":
		return m, invalid("missing required parameter type")
	case "template":
		t := m.Template
		switch {
		case t == nil:
			return m, invalid("type is template but the template object is missing")
		case t.Name == "":
			return m, invalid("missing required parameter template.name")
		case t.Language == nil || t.Language.Code == "":
			return m, invalid("missing required parameter template.language.code")
		case t.Language.Policy != "" && t.Language.Policy != "deterministic":
			return m, invalid("template.language.policy must be \"deterministic\", got %q", t.Language.Policy)
		}
		for i, c := range t.Components {
			for j, p := range c.Parameters {
				if p.Type == "text" && (p.Text == nil || strings.TrimSpace(*p.Text) == "") {
					return m, &requestError{code: 131008, details: fmt.Sprintf("template.components[%d].parameters[%d].text is empty", i, j)}
				}
			}
		}
	case "text":
		switch {
		case m.Text == nil || m.Text.Body == "":
			return m, invalid("missing required parameter text.body")
		case len([]rune(m.Text.Body)) > 4096:
			return m, invalid("text.body is longer than 4096 characters")
		}
	default:
		return m, &requestError{code: 131051, details: fmt.Sprintf("message type %q is not supported by the sandbox", m.Type)}
	}
	return m, nil
}

// waID reduces a number to its digits the way Meta accepts it: '+', '-',
// '(', ')' and spaces are dropped; anything else makes it no number.
func waID(to string) string {
	var b strings.Builder
	for _, c := range to {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == '+' || c == '-' || c == '(' || c == ')' || c == ' ':
		default:
			return ""
		}
	}
	return b.String()
}

// Business-scoped user ids (docs/cloud-api.md#business-scoped-user-ids).
// The sandbox stands for Meta, so it reads them by its own rule rather
// than wasend's: a test then proves what wasend sends, not that two copies
// of one function agree.

// isUserID: two capital letters, a period, optionally ENT., then 1 to 128
// letters or digits.
func isUserID(s string) bool {
	if len(s) < 4 || s[2] != '.' || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return false
	}
	id := strings.TrimPrefix(s[3:], "ENT.")
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// userIDOf is the business-scoped user id the sandbox gives the person at
// number waID (ZZ: a code ISO 3166 leaves to users), so that its webhooks
// carry one as Meta's do since April 2026.
func userIDOf(waID string) string { return "ZZ." + waID }

// person is who a request is for: the digits of to, or the user id in
// recipient (to wins when both are given, as at Meta). A user id in to is
// the person too, but inTo says Meta accepts it and never delivers it.
func person(m inMessage) (who string, inTo bool) {
	switch {
	case m.To != "" && isUserID(m.To):
		return m.To, true
	case m.To != "":
		return waID(m.To), false
	}
	return m.Recipient, false
}

// recipientFields are a status's recipient fields for who (a number's
// digits or a user id): recipient_id with the number, recipient_user_id
// always.
func recipientFields(st map[string]any, who string) {
	if isUserID(who) {
		st["recipient_user_id"] = who
		return
	}
	st["recipient_id"], st["recipient_user_id"] = who, userIDOf(who)
}

// sender is an inbound message's sender fields and its contacts entry
// for who: a person known by a user id sends without from.
func sender(msg map[string]any, who string) map[string]any {
	name := "Sandbox " + who[max(0, len(who)-4):]
	if isUserID(who) {
		msg["from_user_id"] = who
		return map[string]any{"profile": map[string]any{"name": name}, "user_id": who}
	}
	msg["from"], msg["from_user_id"] = who, userIDOf(who)
	return map[string]any{"profile": map[string]any{"name": name}, "wa_id": who, "user_id": userIDOf(who)}
}

// acceptedKey is how Accepted names who: "+" and digits, or the user id.
func acceptedKey(who string) string {
	if isUserID(who) {
		return who
	}
	return "+" + who
}
