package sandbox

import (
	"fmt"
	"github.com/wasend/wasend/internal/whatsapp"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// phoneNumberPath extracts the phone number id from /vNN.N/{id}: the
// phone-number node wasend's preflight reads.
func phoneNumberPath(u *url.URL) (string, bool) {
	parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(parts) != 2 || len(parts[0]) < 2 || parts[0][0] != 'v' {
		return "", false
	}
	id, err := url.PathUnescape(parts[1])
	if err != nil || id == "" {
		return "", false
	}
	return id, true
}

// phoneNumberBody is the phone-number node as Graph returns it.
type phoneNumberBody struct {
	ID                 string `json:"id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	QualityRating      string `json:"quality_rating"`
	CodeVerification   string `json:"code_verification_status"`
	PlatformType       string `json:"platform_type"`
	Throughput         struct {
		Level string `json:"level"`
	} `json:"throughput"`
	MessagingLimit string `json:"whatsapp_business_manager_messaging_limit,omitempty"`
	NameStatus     string `json:"name_status"`
}

// graphErrorWithSubcode is the error envelope with the (deprecated, but
// still sent) error_subcode that some answers carry.
type graphErrorWithSubcode struct {
	Error struct {
		Message   string `json:"message"`
		Type      string `json:"type"`
		Code      int    `json:"code"`
		Subcode   int    `json:"error_subcode,omitempty"`
		FBTraceID string `json:"fbtrace_id"`
	} `json:"error"`
}

func writeGraphErrorSubcode(w http.ResponseWriter, status, code, subcode int, typ, message, traceID string) {
	var e graphErrorWithSubcode
	e.Error.Message, e.Error.Type, e.Error.Code, e.Error.Subcode, e.Error.FBTraceID = message, typ, code, subcode, traceID
	writeJSON(w, status, e)
}

// unknownNumber reports whether Graph would not find the phone number id:
// one listed in Faults.UnknownNumbers, or one that is not all digits (real
// ids are).
func (s *Server) unknownNumber(id string) bool {
	if slices.Contains(s.faults.UnknownNumbers, id) {
		return true
	}
	return strings.Trim(id, "0123456789") != ""
}

// badToken reports whether token is one Graph would refuse.
func (s *Server) badToken(token string) bool {
	return token == "" || slices.Contains(s.faults.BadTokens, token)
}

// servePhoneNumber answers GET /{version}/{phone-number-id} as Graph does:
// the number's node, 401 with code 190 for a bad token, 400 with code 100
// and subcode 33 for an id that does not exist. FatalAccounts are faults of
// sending and leave reads alone. These reads are not Records: those are
// the messages sent.
func (s *Server) servePhoneNumber(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeGraphError(w, http.StatusMethodNotAllowed, 100, fmt.Sprintf("method %s is not supported on %s", r.Method, r.URL.Path), "", 0)
		return
	}
	s.mu.Lock()
	s.seq++
	trace := s.traceID()
	s.mu.Unlock()
	switch {
	case s.badToken(bearerToken(r)):
		writeGraphErrorSubcode(w, http.StatusUnauthorized, 190, 0, "OAuthException",
			"Invalid OAuth access token - Cannot parse access token", trace)
		return
	case s.unknownNumber(id):
		writeGraphErrorSubcode(w, http.StatusBadRequest, 100, 33, "GraphMethodException",
			fmt.Sprintf("Unsupported get request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api", id), trace)
		return
	}
	if strings.Contains(r.URL.Query().Get("fields"), whatsapp.MarketingOnboardingField) {
		// A WABA read: its Marketing Messages API onboarding.
		status, ok := s.faults.Marketing[id]
		if !ok {
			status = MarketingOnboarded
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id, whatsapp.MarketingOnboardingField: status})
		return
	}
	p := phoneNumberBody{ID: id, DisplayPhoneNumber: "+" + id, VerifiedName: "wasend sandbox " + id,
		QualityRating: "GREEN", CodeVerification: "VERIFIED", PlatformType: "CLOUD_API",
		MessagingLimit: "TIER_UNLIMITED", NameStatus: "APPROVED"}
	p.Throughput.Level = "STANDARD"
	n := s.faults.Numbers[id]
	for _, f := range []struct {
		to *string
		v  string
	}{
		{&p.QualityRating, n.QualityRating}, {&p.Throughput.Level, n.ThroughputLevel},
		{&p.MessagingLimit, n.MessagingLimit}, {&p.NameStatus, n.NameStatus},
	} {
		if f.v != "" {
			*f.to = f.v
		}
	}
	if p.MessagingLimit == "-" {
		p.MessagingLimit = ""
	}
	writeJSON(w, http.StatusOK, p)
}

// ParseNumber parses a --number value "PNID=FIELD:VALUE[,FIELD:VALUE…]",
// the fields being limit (TIER_2K…), quality (GREEN…), throughput
// (STANDARD, HIGH) and name (APPROVED…).
func ParseNumber(v string) (string, Number, error) {
	var n Number
	id, spec, ok := strings.Cut(v, "=")
	if !ok || id == "" || spec == "" {
		return "", n, fmt.Errorf("--number %q: want PNID=limit:TIER_2K,quality:RED,throughput:HIGH,name:APPROVED", v)
	}
	for _, kv := range strings.Split(spec, ",") {
		k, val, ok := strings.Cut(kv, ":")
		if !ok || val == "" {
			return "", n, fmt.Errorf("--number %q: %q is not FIELD:VALUE", v, kv)
		}
		switch strings.ToLower(k) {
		case "limit":
			n.MessagingLimit = strings.ToUpper(val)
		case "quality":
			n.QualityRating = strings.ToUpper(val)
		case "throughput":
			n.ThroughputLevel = strings.ToUpper(val)
		case "name":
			n.NameStatus = strings.ToUpper(val)
		default:
			return "", n, fmt.Errorf("--number %q: unknown field %q (limit, quality, throughput, name)", v, k)
		}
	}
	return id, n, nil
}
