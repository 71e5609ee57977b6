package whatsapp

import (
	"context"
	"fmt"
	"net/url"
)

// MarketingOnboardingField is the WABA field that says whether its
// portfolio is onboarded to the Marketing Messages API.
const MarketingOnboardingField = "marketing_messages_onboarding_status"

// MarketingStatus reads a WABA's marketing_messages_onboarding_status
// ("" when Graph leaves the field out). Errors are those of PhoneNumber.
func (c *Client) MarketingStatus(ctx context.Context, wabaID, token string) (string, error) {
	if wabaID == "" || token == "" {
		return "", fmt.Errorf("%w: WABA id and token are required", ErrNoCredentials)
	}
	endpoint := c.baseURL + "/" + c.version + "/" + url.PathEscape(wabaID) + "?" + url.Values{"fields": {MarketingOnboardingField}}.Encode()
	var body struct {
		Status string `json:"marketing_messages_onboarding_status"`
	}
	if err := c.getJSON(ctx, endpoint, token, &body); err != nil {
		return "", err
	}
	return body.Status, nil
}
