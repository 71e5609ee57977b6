package whatsapp

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 9, 11, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"7", 7 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"Fri, 11 Sep 2026 12:01:30 GMT", 90 * time.Second},
		{"Fri, 11 Sep 2026 11:59:00 GMT", 0}, // in the past
		{"soon", 0},
		{"99999999999999999999", 0}, // overflows int64
		{"9999999999999", 0},        // overflows time.Duration
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.value, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

func TestParseBUC(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{"absent", "", 0},
		{"not json", "{", 0},
		{"zero", `{"123":[{"type":"whatsapp","call_count":10,"estimated_time_to_regain_access":0}]}`, 0},
		{"one entry", `{"123":[{"type":"whatsapp","call_count":100,"estimated_time_to_regain_access":5}]}`, 5 * time.Minute},
		{"max over entries and businesses", `{"1":[{"type":"whatsapp","estimated_time_to_regain_access":3},` +
			`{"type":"whatsapp_business_management","estimated_time_to_regain_access":12}],` +
			`"2":[{"type":"whatsapp","estimated_time_to_regain_access":7}]}`, 12 * time.Minute},
		{"fractional minutes", `{"1":[{"estimated_time_to_regain_access":1.5}]}`, 90 * time.Second},
		{"negative", `{"1":[{"estimated_time_to_regain_access":-4}]}`, 0},
		{"absurd value is capped", `{"1":[{"estimated_time_to_regain_access":1e300}]}`, 7 * 24 * time.Hour},
		{"wrong shape", `{"1":{"estimated_time_to_regain_access":4}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseBUC(tt.value); got != tt.want {
				t.Errorf("parseBUC = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterTakesTheLonger(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "30")
	h.Set("X-Business-Use-Case-Usage", `{"1":[{"estimated_time_to_regain_access":2}]}`)
	if got := retryAfter(h, time.Now()); got != 2*time.Minute {
		t.Errorf("retryAfter = %v, want 2m", got)
	}
	h.Set("Retry-After", "600")
	if got := retryAfter(h, time.Now()); got != 10*time.Minute {
		t.Errorf("retryAfter = %v, want 10m", got)
	}
}

func TestParseAPIError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   APIError
		text   string
	}{
		{
			name:   "full envelope",
			status: 400,
			body: `{"error":{"message":"(#130429) Rate limit hit","type":"OAuthException","code":130429,` +
				`"error_data":{"messaging_product":"whatsapp","details":"Cloud API message throughput has been reached."},` +
				`"error_subcode":2494055,"fbtrace_id":"Az8or2yhqkZfEZ-_4Qn_Bam"}}`,
			want: APIError{HTTPStatus: 400, Code: 130429, Subcode: 2494055, Type: "OAuthException",
				Message: "(#130429) Rate limit hit", Title: "Rate limit hit",
				Details: "Cloud API message throughput has been reached.", FBTraceID: "Az8or2yhqkZfEZ-_4Qn_Bam"},
			text: "graph error 130429 (HTTP 400): Rate limit hit: Cloud API message throughput has been reached. (error_subcode 2494055) [fbtrace_id Az8or2yhqkZfEZ-_4Qn_Bam]",
		},
		{
			name:   "code 0 is a real code",
			status: 401,
			body:   `{"error":{"message":"(#0) Could not authenticate","type":"OAuthException","code":0}}`,
			want:   APIError{HTTPStatus: 401, Code: 0, Type: "OAuthException", Message: "(#0) Could not authenticate", Title: "Could not authenticate"},
			text:   "graph error 0 (HTTP 401): Could not authenticate",
		},
		{
			name:   "user title and message",
			status: 400,
			body:   `{"error":{"message":"Invalid parameter","code":100,"error_user_title":"Bad param","error_user_msg":"Parameter name is missing"}}`,
			want:   APIError{HTTPStatus: 400, Code: 100, Message: "Invalid parameter", Title: "Bad param", Details: "Parameter name is missing"},
			text:   "graph error 100 (HTTP 400): Bad param: Parameter name is missing",
		},
		{"plain text", 503, "Service Unavailable", APIError{HTTPStatus: 503, NoBody: true}, "graph: HTTP 503 without a Graph error body"},
		{"empty", 429, "", APIError{HTTPStatus: 429, NoBody: true}, "graph: HTTP 429 without a Graph error body"},
		{"error as string", 502, `{"error":"bad gateway"}`, APIError{HTTPStatus: 502, NoBody: true}, "graph: HTTP 502 without a Graph error body"},
		{"error without code", 400, `{"error":{"message":"x"}}`, APIError{HTTPStatus: 400, NoBody: true}, "graph: HTTP 400 without a Graph error body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseAPIError(tt.status, http.Header{}, []byte(tt.body), "tok", time.Now())
			if *got != tt.want {
				t.Errorf("parseAPIError =\n %+v\nwant\n %+v", *got, tt.want)
			}
			if got.Error() != tt.text {
				t.Errorf("Error() =\n %q\nwant\n %q", got.Error(), tt.text)
			}
		})
	}
}
