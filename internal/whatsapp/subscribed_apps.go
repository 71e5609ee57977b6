package whatsapp

import (
	"context"
	"fmt"
	"net/url"
)

// SubscribedApp is one app subscribed to a WhatsApp Business Account's
// webhooks, as GET /{waba-id}/subscribed_apps lists it.
type SubscribedApp struct {
	Data struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"whatsapp_business_api_data"`
}

// SubscribedApps reads the apps subscribed to a WABA's webhooks: with none,
// no status or message webhook of its numbers reaches any receiver.
// Errors are those of PhoneNumber.
func (c *Client) SubscribedApps(ctx context.Context, wabaID, token string) ([]SubscribedApp, error) {
	if wabaID == "" || token == "" {
		return nil, fmt.Errorf("%w: WABA id and token are required", ErrNoCredentials)
	}
	endpoint := c.baseURL + "/" + c.version + "/" + url.PathEscape(wabaID) + "/subscribed_apps"
	var body struct {
		Data []SubscribedApp `json:"data"`
	}
	if err := c.getJSON(ctx, endpoint, token, &body); err != nil {
		return nil, err
	}
	return body.Data, nil
}
