package whatsapp

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a non-2xx answer from the Graph API.
type APIError struct {
	HTTPStatus int
	Code       int // error.code; the only field to build handling on
	Subcode    int // error_subcode: deprecated by Meta, yet it tells an unknown phone number id (100/33)
	Type       string
	Message    string // "(#code) title" as sent
	Title      string // Message without the "(#code) " prefix
	Details    string // error.error_data.details
	FBTraceID  string
	// RetryAfter is the server's hint from Retry-After or from
	// x-business-use-case-usage; zero when there is none.
	RetryAfter time.Duration
	// NoBody is set when the response had no Graph error envelope (a proxy,
	// a load balancer). Code is then meaningless and HTTPStatus decides.
	NoBody bool
	// Marketing: the request went to the Marketing Messages API, whose
	// codes can mean something else there (131009: the template is still
	// syncing to it).
	Marketing bool
}

func (e *APIError) Error() string {
	if e.NoBody {
		if e.HTTPStatus == http.StatusNotFound {
			return "graph: HTTP 404 without a Graph error body: nothing at this URL answers as the Graph API for this phone number id (a proxy, or a wrong base URL or phone number id?)"
		}
		return fmt.Sprintf("graph: HTTP %d without a Graph error body", e.HTTPStatus)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "graph error %d (HTTP %d)", e.Code, e.HTTPStatus)
	title := e.Title
	if title == "" {
		title = e.Message
	}
	if title != "" {
		b.WriteString(": " + title)
	}
	if e.Details != "" && e.Details != title {
		b.WriteString(": " + e.Details)
	}
	if e.Subcode != 0 {
		fmt.Fprintf(&b, " (error_subcode %d)", e.Subcode)
	}
	if e.FBTraceID != "" {
		b.WriteString(" [fbtrace_id " + e.FBTraceID + "]")
	}
	return b.String()
}

// TransportError is a send that got no usable answer.
type TransportError struct {
	// Written reports whether the whole request reached the wire. When false
	// (DNS, connection refused) the message provably was not sent; when true
	// it may have been accepted, and resending risks a duplicate because the
	// Cloud API has no idempotency key.
	Written bool
	Err     error
}

func (e *TransportError) Error() string {
	if e.Written {
		return "whatsapp: request may have been accepted: " + e.Err.Error()
	}
	return "whatsapp: request not sent: " + e.Err.Error()
}

func (e *TransportError) Unwrap() error { return e.Err }

// graphEnvelope is the error body of docs/cloud-api.md#error-envelope.
type graphEnvelope struct {
	Error *struct {
		Message        string `json:"message"`
		Type           string `json:"type"`
		Code           *int   `json:"code"`
		Subcode        int    `json:"error_subcode"`
		ErrorUserTitle string `json:"error_user_title"`
		ErrorUserMsg   string `json:"error_user_msg"`
		FBTraceID      string `json:"fbtrace_id"`
		ErrorData      struct {
			Details string `json:"details"`
		} `json:"error_data"`
	} `json:"error"`
}

// minScrubbedToken is the shortest token removed from error texts.
const minScrubbedToken = 8

// parseAPIError builds the error for a non-2xx response. token is scrubbed
// from every server-provided string, in case a proxy echoes the request.
func parseAPIError(status int, h http.Header, body []byte, token string, now time.Time) *APIError {
	e := &APIError{HTTPStatus: status, RetryAfter: retryAfter(h, now)}
	var env graphEnvelope
	// A body without error.code is not a Graph error we can classify; code 0
	// is a real Graph code (account-fatal), so presence matters, not value.
	if json.Unmarshal(body, &env) != nil || env.Error == nil || env.Error.Code == nil {
		e.NoBody = true
		return e
	}
	g := env.Error
	e.Code = *g.Code
	e.Subcode = g.Subcode
	e.Type = g.Type
	e.Message = g.Message
	e.Title = g.ErrorUserTitle
	if e.Title == "" {
		e.Title = strings.TrimPrefix(g.Message, fmt.Sprintf("(#%d) ", e.Code))
	}
	e.Details = g.ErrorData.Details
	if e.Details == "" {
		e.Details = g.ErrorUserMsg
	}
	e.FBTraceID = g.FBTraceID
	// Real access tokens are long; scrubbing a few characters would only
	// mangle the message (and tell which letters the token has).
	if len(token) >= minScrubbedToken {
		for _, s := range []*string{&e.Type, &e.Message, &e.Title, &e.Details, &e.FBTraceID} {
			*s = strings.ReplaceAll(*s, token, "[redacted]")
		}
	}
	return e
}

// retryAfter returns the longer of the two hints Meta may send. Neither is
// documented for /messages (docs/cloud-api.md#retry-hints), so both are
// optional.
func retryAfter(h http.Header, now time.Time) time.Duration {
	return max(parseRetryAfter(h.Get("Retry-After"), now), parseBUC(h.Get("X-Business-Use-Case-Usage")))
}

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 || secs > math.MaxInt64/int64(time.Second) {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// parseBUC reads estimated_time_to_regain_access (minutes) from the
// x-business-use-case-usage header: {"<business id>":[{...}, ...], ...}.
func parseBUC(v string) time.Duration {
	if v == "" {
		return 0
	}
	var usage map[string][]struct {
		Minutes float64 `json:"estimated_time_to_regain_access"`
	}
	if json.Unmarshal([]byte(v), &usage) != nil {
		return 0
	}
	var mins float64
	for _, entries := range usage {
		for _, u := range entries {
			mins = max(mins, u.Minutes)
		}
	}
	// Cap at a week so a garbage value cannot overflow time.Duration.
	mins = min(mins, 7*24*60)
	return time.Duration(mins * float64(time.Minute))
}
