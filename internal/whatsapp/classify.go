package whatsapp

import (
	"errors"
	"fmt"
	"net/http"
)

// Class is what a sender should do after an attempt. Classify is the one
// place that maps Cloud API outcomes to classes
// (docs/cloud-api.md#error-codes-and-what-wasend-does).
type Class int

const (
	// ClassOK: accepted; store the wamid.
	ClassOK Class = iota
	// ClassThrottled: the account (number, WABA or app) is over its rate;
	// slow the account down and retry the row.
	ClassThrottled
	// ClassPairThrottled: too many messages to this one recipient; requeue
	// only the row after 4^X s.
	ClassPairThrottled
	// ClassLongRestriction: the account is restricted for hours; pause it
	// and alert, leaving rows pending.
	ClassLongRestriction
	// ClassTransient: provably not accepted; retry with backoff, capped.
	ClassTransient
	// ClassPermanent: this row can never succeed as it is.
	ClassPermanent
	// ClassCampaignFatal: the template, or how the campaign fills it, is
	// wrong for every row alike; stop the campaign and put the row back.
	ClassCampaignFatal
	// ClassAccountFatal: the token or account needs a human; stop every
	// send on the account.
	ClassAccountFatal
	// ClassAmbiguous: the request was written but no answer came; the
	// message may have been accepted and must not be resent automatically.
	ClassAmbiguous
	// ClassTemplateSyncing: the Marketing Messages API does not know the
	// template yet (131009 there: a new or long-unused template takes
	// minutes to sync); wait and retry the row, costing no attempt.
	ClassTemplateSyncing
	// ClassNumberUpgrading: the number is in maintenance while Meta raises
	// its throughput (131057, about a minute); rest the number and retry,
	// costing no attempt and not lowering its rate.
	ClassNumberUpgrading
)

var classNames = [...]string{
	ClassOK:              "ok",
	ClassThrottled:       "throttled",
	ClassPairThrottled:   "pair-throttled",
	ClassLongRestriction: "long-restriction",
	ClassTransient:       "transient",
	ClassPermanent:       "permanent",
	ClassCampaignFatal:   "campaign-fatal",
	ClassAccountFatal:    "account-fatal",
	ClassAmbiguous:       "ambiguous",
	ClassTemplateSyncing: "template-syncing",
	ClassNumberUpgrading: "number-upgrading",
}

func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Classify maps the error returned by Send to a Class; nil is ClassOK.
// Errors that are neither *APIError nor *TransportError were raised before
// sending: ErrNoCredentials is account-fatal, anything else permanent.
func Classify(err error) Class {
	if err == nil {
		return ClassOK
	}
	var api *APIError
	if errors.As(err, &api) {
		if api.NoBody {
			return classifyStatus(api.HTTPStatus)
		}
		if api.Marketing {
			if c, ok := marketingCodes[api.Code]; ok {
				return c
			}
		}
		return ClassifyCodes(api.Code, api.Subcode)
	}
	var tr *TransportError
	if errors.As(err, &tr) {
		if tr.Written {
			return ClassAmbiguous
		}
		return ClassTransient
	}
	if errors.Is(err, ErrNoCredentials) {
		return ClassAccountFatal
	}
	return ClassPermanent
}

// marketingCodes are the codes the Marketing Messages API answers with a
// meaning of their own (docs/cloud-api.md#marketing-messages-api); every
// other code means there what it means on /messages. 131009 is "Parameter
// value is not valid" on /messages, a row's error; on /marketing_messages
// Meta answers it for a template not yet synced to the API. 131055 there
// is a send the API refuses whatever the row: a template that is not a
// marketing one, or a portfolio that has not accepted the API's terms
// (partners' pages; **unconfirmed** on Meta's, whose table lists the
// messages but not their codes): every row would fail alike.
var marketingCodes = map[int]Class{
	131009: ClassTemplateSyncing,
	131055: ClassCampaignFatal,
}

// accountSubcodes are the (code, error_subcode) pairs whose code alone would
// fail the row but which name the account instead. Code 100 with subcode 33
// is Meta's "Object with ID … does not exist, cannot be loaded due to missing
// permissions, or does not support this operation": the phone number id is
// mistyped, deleted or not the token's — every row on it would fail the same
// way. The other account-level subcodes of Meta's table (458–467 and 492,
// expired or invalid sessions) come with code 190, account-fatal already.
var accountSubcodes = map[[2]int]bool{
	{100, 33}: true,
}

// ClassifyCodes is ClassifyCode refined by error_subcode, which Meta calls
// deprecated but still sends (docs/cloud-api.md#error-envelope); 0 means none.
func ClassifyCodes(code, subcode int) Class {
	if subcode != 0 && accountSubcodes[[2]int{code, subcode}] {
		return ClassAccountFatal
	}
	return ClassifyCode(code)
}

// ClassifyCode maps a Graph error code, from a synchronous answer or from a
// failed status webhook, to a Class. Unlisted codes are permanent for the
// row: retrying an unknown failure blindly risks hammering the account.
func ClassifyCode(code int) Class {
	switch code {
	case 130429, 80007, 4:
		return ClassThrottled
	case 131056:
		return ClassPairThrottled
	case 131048, 131064:
		return ClassLongRestriction
	case 1, 2, 131000, 131016, 133004:
		return ClassTransient
	case 131057:
		return ClassNumberUpgrading
	case 132000, 132001, 132005, 132007, 132012, 132015, 132016, 131063:
		// The template's errors hold for every row that fills it the same
		// way: failing rows one by one would burn the list (and the
		// number's quality) before the error ratio noticed.
		return ClassCampaignFatal
	case 190, 0, 3, 10, 131005, 368, 131031, 131042, 131045, 133010, 33, 131037:
		return ClassAccountFatal
	}
	if code >= 200 && code <= 299 {
		return ClassAccountFatal
	}
	return ClassPermanent
}

// Remedy says what an operator does about a campaign-fatal code before
// resuming the campaign; "" for other codes.
func Remedy(code int) string {
	switch code {
	case 132000:
		return "make the CSV's parameter columns (--params) match the template's placeholders, or the template match them"
	case 132001:
		return "check the template's name and language and that it is approved (`wasend template sync`, `wasend template list`)"
	case 132005:
		return "shorten the template's text or the values the rows put in it"
	case 132007:
		return "edit the template so that it meets WhatsApp's policy and have it approved again"
	case 132012:
		return "give each parameter the type the template expects (text, or a media link or id for a media header)"
	case 132015:
		return "the template was paused for low quality: edit it and wait for it to be approved again"
	case 132016:
		return "the template is disabled for good: send the campaign with another template"
	case 131063:
		return "marketing messages are disabled on the Cloud API for this business: enable them, or send a utility template"
	case 131055:
		return "the Marketing Messages API takes marketing templates only, from a portfolio that accepted its terms: send with --api cloud or auto, or accept the terms (`wasend template sync` reads the onboarding)"
	}
	return ""
}

// classifyStatus is the fallback for answers without a Graph body.
func classifyStatus(status int) Class {
	switch {
	case status == http.StatusTooManyRequests:
		return ClassThrottled
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		// A gateway error means a proxy passed the request on and then lost
		// the upstream answer: Meta may have accepted the message.
		return ClassAmbiguous
	case status >= 500:
		return ClassTransient
	case status == http.StatusNotFound:
		// Something answered, and it was not the Graph API: a proxy or a
		// wrong base URL knows no route for this number. The account's
		// configuration, not the row's fault and no outage.
		return ClassAccountFatal
	default:
		return ClassPermanent
	}
}
