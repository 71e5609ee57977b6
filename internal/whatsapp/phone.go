package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// phoneFields are the phone-number fields PhoneNumber asks for: all
// documented (docs/cloud-api.md#the-phone-number-node), none that costs the API anything.
const phoneFields = "id,display_phone_number,verified_name,quality_rating,throughput," +
	"whatsapp_business_manager_messaging_limit,name_status"

// PhoneNumber is what GET /{version}/{phone-number-id} says about a
// business number.
type PhoneNumber struct {
	ID                 string `json:"id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	QualityRating      string `json:"quality_rating"` // GREEN, YELLOW, RED, UNKNOWN
	Throughput         struct {
		Level string `json:"level"` // STANDARD, HIGH, …
	} `json:"throughput"`
	// MessagingLimit is the portfolio's messaging limit: TIER_250,
	// TIER_2K, TIER_10K, TIER_100K or TIER_UNLIMITED.
	MessagingLimit string `json:"whatsapp_business_manager_messaging_limit"`
	NameStatus     string `json:"name_status"`
}

// ThroughputPerSecond is the number's throughput level in messages per
// second: STANDARD 80, HIGH 1,000 (docs/cloud-api.md#throughput); 0 for a level
// not known.
func (p PhoneNumber) ThroughputPerSecond() float64 {
	switch p.Throughput.Level {
	case "STANDARD":
		return 80
	case "HIGH":
		return 1000
	}
	return 0
}

// PhoneNumber reads a business number with its token: one cheap call that
// proves the base URL answers, the token is valid and the number exists
// for it. Errors are those of Send: *APIError (an unknown id is code 100
// with subcode 33, a bad token 190), *TransportError, or a validation
// error wrapping ErrNoCredentials.
func (c *Client) PhoneNumber(ctx context.Context, phoneNumberID, token string) (PhoneNumber, error) {
	if phoneNumberID == "" || token == "" {
		return PhoneNumber{}, fmt.Errorf("%w: phone number id and token are required", ErrNoCredentials)
	}
	endpoint := c.baseURL + "/" + c.version + "/" + url.PathEscape(phoneNumberID) + "?fields=" + url.QueryEscape(phoneFields)
	ctx = c.requestContext(ctx)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return PhoneNumber{}, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	hreq.Header.Set("Authorization", "Bearer "+token)
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		// A GET changes nothing: whether it was written does not matter.
		return PhoneNumber{}, &TransportError{Err: err}
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if readErr != nil {
			data = nil
		}
		return PhoneNumber{}, parseAPIError(resp.StatusCode, resp.Header, data, token, c.now())
	}
	if readErr != nil {
		return PhoneNumber{}, &TransportError{Err: fmt.Errorf("read response: %w", readErr)}
	}
	var p PhoneNumber
	if err := json.Unmarshal(data, &p); err != nil {
		return PhoneNumber{}, &TransportError{Err: fmt.Errorf("HTTP %d with an unreadable body: %w", resp.StatusCode, err)}
	}
	if p.ID != phoneNumberID {
		return PhoneNumber{}, &TransportError{Err: fmt.Errorf("HTTP %d for phone number id %s names id %q: not a Graph API answer", resp.StatusCode, phoneNumberID, p.ID)}
	}
	return p, nil
}
