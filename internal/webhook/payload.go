// Package webhook receives Meta's WhatsApp webhooks and applies them:
// delivery statuses (sent, delivered, read, failed) to the messages wasend
// sent, template status updates to the campaigns using the template, and
// quality or account updates to the accounts they name.
//
// The receiver checks a POST's signature over its raw bytes, stores the
// body as it came (the inbox) and answers; an Applier drains the inbox apart
// from the HTTP handler, so a slow disk or a burst never makes Meta retry.
package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/wasend/wasend/internal/campaign"
)

// ErrMalformed marks a JSON body that is not a WhatsApp Business Account
// notification wasend can read.
var ErrMalformed = errors.New("not a WhatsApp Business Account notification")

// payload is the envelope of docs/cloud-api.md#payload-envelope.
type payload struct {
	Object string `json:"object"`
	Entry  []struct {
		ID      string `json:"id"`
		Changes []struct {
			Field string          `json:"field"`
			Value json.RawMessage `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type messagesValue struct {
	// Inbound parts, only looked for: decodeInbound reads them when any
	// is there, so a status body is read once.
	Contacts        json.RawMessage `json:"contacts"`
	Messages        json.RawMessage `json:"messages"`
	UserPreferences json.RawMessage `json:"user_preferences"`
	Metadata        struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
		PhoneNumberID      string `json:"phone_number_id"`
	} `json:"metadata"`
	Statuses []struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		Timestamp   string `json:"timestamp"`
		RecipientID string `json:"recipient_id"`
		// RecipientUserID is the person's business-scoped user id
		// (docs/cloud-api.md#business-scoped-user-ids).
		RecipientUserID string `json:"recipient_user_id"`
		CallbackData    string `json:"biz_opaque_callback_data"`
		Pricing         *struct {
			Category     string `json:"category"`
			Type         string `json:"type"`
			PricingModel string `json:"pricing_model"`
			Billable     *bool  `json:"billable"`
		} `json:"pricing"`
		Errors []struct {
			Code      int    `json:"code"`
			Title     string `json:"title"`
			Message   string `json:"message"`
			ErrorData struct {
				Details string `json:"details"`
			} `json:"error_data"`
		} `json:"errors"`
	} `json:"statuses"`
}

type templateValue struct {
	Event    string `json:"event"`
	Name     string `json:"message_template_name"`
	Language string `json:"message_template_language"`
	Reason   string `json:"reason"`
}

type accountValue struct {
	PhoneNumberID      string `json:"phone_number_id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumber        string `json:"phone_number"`
	Event              string `json:"event"`
	CurrentLimit       string `json:"current_limit"`
	BanInfo            *struct {
		WABABanState string `json:"waba_ban_state"`
	} `json:"ban_info"`
	ViolationInfo *struct {
		ViolationType string `json:"violation_type"`
	} `json:"violation_info"`
}

// stoppingEvents are quality and account events that flag or restrict a
// number: wasend stops its account as after a synchronous 131048.
var stoppingEvents = map[string]bool{
	"FLAGGED": true, "DOWNGRADE": true, "ACCOUNT_RESTRICTION": true, "ACCOUNT_VIOLATION": true,
	"DISABLED_UPDATE": true, "ACCOUNT_DELETED": true, "PHONE_NUMBER_REMOVED": true,
}

// statusPayload is payload read in one pass for the bodies Meta posts
// most: statuses alone, in messages changes. decodeStatusBody falls back to
// the general decoding for anything else.
type statusPayload struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string        `json:"field"`
			Value messagesValue `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// Decode reads one webhook body. Fields wasend does not act on are skipped;
// a body that is not a notification at all is ErrMalformed.
func Decode(body []byte) (campaign.Notification, error) {
	if n, ok := decodeStatusBody(body); ok {
		return n, nil
	}
	return decodeBody(body)
}

// decodeStatusBody reads a body of statuses only in one pass, as Decode
// would: ok is false for any other body, or one that does not decode
// (Decode then says where). It reads with JSON v2, a third of the CPU of
// encoding/json here; what v2 refuses and v1 takes (a name twice, invalid
// UTF-8) goes to the general decoding, as does anything but statuses.
func decodeStatusBody(body []byte) (n campaign.Notification, ok bool) {
	var p statusPayload
	if err := jsonv2.Unmarshal(body, &p, jsonv2.MatchCaseInsensitiveNames(true)); err != nil || p.Object != "whatsapp_business_account" {
		return n, false
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			if c.Field != "messages" || c.Value.inbound() {
				return campaign.Notification{}, false
			}
		}
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			if err := addStatuses(&c.Value, &n); err != nil {
				return campaign.Notification{}, false
			}
		}
	}
	return n, true
}

// decodeBody is Decode for any body: each change's value is read apart,
// by its field.
func decodeBody(body []byte) (campaign.Notification, error) {
	var (
		p payload
		n campaign.Notification
	)
	if err := json.Unmarshal(body, &p); err != nil {
		return n, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if p.Object != "whatsapp_business_account" {
		return n, fmt.Errorf("%w: object is %q", ErrMalformed, p.Object)
	}
	for i, e := range p.Entry {
		for j, c := range e.Changes {
			where := fmt.Sprintf("entry[%d].changes[%d] (%s)", i, j, c.Field)
			var err error
			switch c.Field {
			case "messages":
				var inbound bool
				if inbound, err = decodeStatuses(c.Value, &n); err == nil && inbound {
					decodeInbound(c.Value, &n)
				}
			case "user_preferences":
				decodeInbound(c.Value, &n)
			case "message_template_status_update":
				var v templateValue
				if err = json.Unmarshal(c.Value, &v); err == nil {
					n.Templates = append(n.Templates, campaign.TemplateEvent{
						Template: v.Name, Lang: v.Language, Event: v.Event, Reason: v.Reason})
				}
			case "phone_number_quality_update", "account_update":
				var v accountValue
				err = json.Unmarshal(c.Value, &v)
				if up, ok := throughputUpgrade(c.Field, v); err == nil && ok {
					n.Upgrades = append(n.Upgrades, up)
				}
				if err == nil && stoppingEvents[v.Event] {
					ev := campaign.AccountEvent{PhoneNumberID: v.PhoneNumberID, DisplayNumber: v.DisplayPhoneNumber,
						Field: c.Field, Event: v.Event}
					if ev.DisplayNumber == "" {
						ev.DisplayNumber = v.PhoneNumber
					}
					switch {
					case v.BanInfo != nil:
						ev.Reason = v.BanInfo.WABABanState
					case v.ViolationInfo != nil:
						ev.Reason = v.ViolationInfo.ViolationType
					case v.CurrentLimit != "":
						ev.Reason = "messaging limit " + v.CurrentLimit
					}
					n.Accounts = append(n.Accounts, ev)
				}
			}
			if err != nil {
				return n, fmt.Errorf("%w: %s: %w", ErrMalformed, where, err)
			}
		}
	}
	return n, nil
}

// decodeStatuses adds the statuses of one messages value to n; inbound:
// the value has inbound parts too.
func decodeStatuses(raw json.RawMessage, n *campaign.Notification) (inbound bool, err error) {
	var v messagesValue
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, err
	}
	return v.inbound(), addStatuses(&v, n)
}

// inbound reports whether v has inbound parts (decodeInbound's).
func (v *messagesValue) inbound() bool {
	return len(v.Contacts) > 0 || len(v.Messages) > 0 || len(v.UserPreferences) > 0
}

// addStatuses adds the statuses of v to n, with the number it names.
func addStatuses(v *messagesValue, n *campaign.Notification) error {
	if m := v.Metadata; m.DisplayPhoneNumber != "" && m.PhoneNumberID != "" {
		if n.Numbers == nil {
			n.Numbers = map[string]string{}
		}
		n.Numbers[m.DisplayPhoneNumber] = m.PhoneNumberID
	}
	for k, s := range v.Statuses {
		secs, err := strconv.ParseInt(s.Timestamp, 10, 64)
		if err != nil {
			return fmt.Errorf("statuses[%d].timestamp %q: want Unix seconds", k, s.Timestamp)
		}
		ev := campaign.StatusEvent{
			WAMID:           s.ID,
			Status:          campaign.Delivery(s.Status),
			At:              time.Unix(secs, 0),
			Recipient:       s.RecipientID,
			RecipientUserID: s.RecipientUserID,
			CallbackData:    s.CallbackData,
			PhoneNumberID:   v.Metadata.PhoneNumberID,
		}
		if s.Pricing != nil {
			ev.Pricing = s.Pricing.Category
			ev.PricingType, ev.PricingModel = s.Pricing.Type, s.Pricing.PricingModel
			ev.NotBillable = s.Pricing.Billable != nil && !*s.Pricing.Billable
		}
		if len(s.Errors) > 0 {
			e := s.Errors[0]
			ev.ErrorCode = e.Code
			ev.ErrorTitle = e.Title
			if ev.ErrorTitle == "" {
				ev.ErrorTitle = e.Message
			}
			if d := e.ErrorData.Details; d != "" && d != ev.ErrorTitle {
				ev.ErrorTitle = strings.TrimSpace(ev.ErrorTitle + ": " + d)
			}
		}
		if campaign.IsBSUID(s.RecipientID) && ev.RecipientUserID == "" {
			// Sent to a user id: whether recipient_id then holds it is
			// not documented; read it as the id, not a number.
			ev.Recipient, ev.RecipientUserID = "", s.RecipientID
		}
		if l, ok := link(ev.Recipient, ev.RecipientUserID); ok {
			n.Links = append(n.Links, l)
		}
		n.Statuses = append(n.Statuses, ev)
	}
	return nil
}

// link pairs a wa_id (digits, with or without '+') with a user id when a
// webhook shows both.
func link(waID, userID string) (campaign.IdentityLink, bool) {
	waID = strings.TrimPrefix(waID, "+")
	if waID == "" || !campaign.IsBSUID(userID) || strings.Trim(waID, "0123456789") != "" {
		return campaign.IdentityLink{}, false
	}
	return campaign.IdentityLink{Phone: "+" + waID, UserID: userID}, true
}
