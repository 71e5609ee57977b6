package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// templateFields are the message-template fields Templates asks for.
const templateFields = "name,language,status,category,parameter_format,components"

// MessageTemplate is a message template as GET /{waba-id}/message_templates
// lists it. Components are kept as Meta sends them.
type MessageTemplate struct {
	Name            string          `json:"name"`
	Language        string          `json:"language"`
	Status          string          `json:"status"` // APPROVED, PENDING, REJECTED, PAUSED, DISABLED
	Category        string          `json:"category"`
	ParameterFormat string          `json:"parameter_format"` // POSITIONAL (default) or NAMED
	Components      json.RawMessage `json:"components"`
}

type templatePage struct {
	Data   []MessageTemplate `json:"data"`
	Paging struct {
		Cursors struct {
			After string `json:"after"`
		} `json:"cursors"`
		Next string `json:"next"`
	} `json:"paging"`
}

// Templates reads every message template of a WhatsApp Business Account,
// following the pages by their cursor. Errors are those of PhoneNumber.
func (c *Client) Templates(ctx context.Context, wabaID, token string) ([]MessageTemplate, error) {
	if wabaID == "" || token == "" {
		return nil, fmt.Errorf("%w: WABA id and token are required", ErrNoCredentials)
	}
	var (
		out   []MessageTemplate
		after string
	)
	for page := 0; page < 100; page++ { // 250 templates a WABA at most: a bound, not a limit
		q := url.Values{"fields": {templateFields}, "limit": {"100"}}
		if after != "" {
			q.Set("after", after)
		}
		endpoint := c.baseURL + "/" + c.version + "/" + url.PathEscape(wabaID) + "/message_templates?" + q.Encode()
		var p templatePage
		if err := c.getJSON(ctx, endpoint, token, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Data...)
		if p.Paging.Next == "" || p.Paging.Cursors.After == "" || len(p.Data) == 0 {
			return out, nil
		}
		after = p.Paging.Cursors.After
	}
	return out, nil
}

// getJSON GETs endpoint with the token and decodes a 2xx answer into v.
func (c *Client) getJSON(ctx context.Context, endpoint, token string, v any) error {
	ctx = c.requestContext(ctx)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	hreq.Header.Set("Authorization", "Bearer "+token)
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return &TransportError{Err: err}
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if readErr != nil {
			data = nil
		}
		return parseAPIError(resp.StatusCode, resp.Header, data, token, c.now())
	}
	if readErr != nil {
		return &TransportError{Err: fmt.Errorf("read response: %w", readErr)}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &TransportError{Err: fmt.Errorf("HTTP %d with an unreadable body: %w", resp.StatusCode, err)}
	}
	return nil
}
