// Package whatsapp is a client for the send endpoint of Meta's WhatsApp
// Cloud API: it builds request bodies, posts them, and turns every outcome
// into either a Response or a typed error that Classify understands.
package whatsapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	DefaultBaseURL = "https://graph.facebook.com"
	DefaultTimeout = 20 * time.Second // as Meta's Node SDK
)

// MarketingEdge is the Marketing Messages API's send edge of a phone number.
const MarketingEdge = "marketing_messages"

// maxResponseBody bounds what we read; real answers are a few hundred bytes.
const maxResponseBody = 1 << 20

// Config configures a Client; zero values get defaults.
type Config struct {
	BaseURL    string
	Version    string
	HTTPClient *http.Client
	Timeout    time.Duration // per request (at most 1/32 more: requestContext)
}

// Client sends messages. It is safe for concurrent use.
type Client struct {
	baseURL string
	version string
	hc      *http.Client
	// post is how Send makes its request: hc.Do, or with the default
	// transport its RoundTrip directly (see New).
	post func(*http.Request) (*http.Response, error)
	// headers holds each token's request headers, shared by its requests
	// (a RoundTripper must not modify a request): nil when post is hc.Do,
	// which may add a cookie jar's cookies to them.
	headers *sync.Map // token → http.Header
	// posts holds the request to each edge Send posts to (one per phone
	// number id and edge), its URL parsed once: each send is a copy with
	// its own context, headers and body, sharing the URL as requests share
	// headers.
	posts   [2]sync.Map // [marketing] phone number id → *http.Request
	timeout time.Duration
	// slice is the requests' latest shared deadline (requestContext).
	slice atomic.Pointer[deadlineSlice]
	now   func() time.Time
}

// defaultTransport keeps an idle connection for every request the engine
// may have in flight (dispatch.DefaultMaxInFlight); net/http's default of
// 2 per host would reconnect for nearly every request over HTTP/1.1. Only
// connections once used at the same time are ever kept.
var defaultTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4096
	t.MaxIdleConnsPerHost = 4096
	return t
}()

// New returns a Client for cfg.
func New(cfg Config) *Client {
	c := &Client{
		baseURL: strings.TrimRight(cfg.BaseURL, "/"),
		version: strings.Trim(cfg.Version, "/"),
		timeout: cfg.Timeout,
		now:     time.Now,
	}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	if c.version == "" {
		c.version = DefaultVersion
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	hc := http.Client{Transport: defaultTransport}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient // a copy: the caller's client stays untouched
	}
	// A 307/308 would make net/http post the body again somewhere else; a
	// message must be posted at most once per Send.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	c.post = c.hc.Do
	if cfg.HTTPClient == nil {
		// Send follows no redirect, keeps no cookies and times out by its
		// context, so http.Client adds nothing to the transport's round
		// trip but work: a copy of the headers (for redirects) and a
		// deadline per request. Errors are wrapped as Do wraps them.
		c.post = func(req *http.Request) (*http.Response, error) {
			resp, err := defaultTransport.RoundTrip(req)
			if err != nil {
				return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
			}
			return resp, nil
		}
		c.headers = &sync.Map{}
	}
	return c
}

// header returns the headers of a request made with token.
func (c *Client) header(token string) http.Header {
	if c.headers != nil {
		if h, ok := c.headers.Load(token); ok {
			return h.(http.Header)
		}
	}
	// Canonical keys, set directly: Header.Set would canonicalise each one.
	h := http.Header{
		"Authorization": {"Bearer " + token},
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
	}
	if c.headers != nil {
		c.headers.Store(token, h)
	}
	return h
}

// postTo returns the request (without context, headers or body) that posts
// to the send edge of phone number id, or its marketing edge.
func (c *Client) postTo(id string, marketing bool) (*http.Request, error) {
	posts := &c.posts[0]
	edge := "/messages"
	if marketing {
		posts, edge = &c.posts[1], "/"+MarketingEdge
	}
	if r, ok := posts.Load(id); ok {
		return r.(*http.Request), nil
	}
	r, err := http.NewRequest(http.MethodPost, c.baseURL+"/"+c.version+"/"+url.PathEscape(id)+edge, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	posts.Store(id, r)
	return r, nil
}

// timeoutSlices is how finely requestContext slices the timeout: a request
// is cancelled once it has taken longer than the timeout, and at most
// 1/timeoutSlices of it later.
const timeoutSlices = 32

// deadlineSlice is the deadline of the requests made from one context that
// start before until: until plus the timeout.
type deadlineSlice struct {
	parent context.Context
	until  time.Time
	ctx    context.Context
	// cancel is never called: requests may still run on ctx when the next
	// slice begins, and ctx's deadline ends it, its timer and its place
	// among parent's children.
	cancel context.CancelFunc
}

// requestContext returns ctx with the client's timeout for one request
// (every request's, here alone). The requests from one context that start
// within 1/timeoutSlices of the timeout share a deadline: the slice's end
// plus the timeout. Each gets at least the timeout, and a run makes a
// timer a slice where context.WithTimeout made and stopped one a request
// (~1.5 % of a run's CPU with its allocations).
func (c *Client) requestContext(ctx context.Context) context.Context {
	now := time.Now() // not c.now: a context's deadline is on this clock
	if s := c.slice.Load(); s != nil && s.parent == ctx && now.Before(s.until) {
		return s.ctx
	}
	s := &deadlineSlice{parent: ctx, until: now.Add(c.timeout / timeoutSlices)}
	s.ctx, s.cancel = context.WithDeadline(ctx, s.until.Add(c.timeout))
	// Only a comparable context is kept to compare the next ones with:
	// comparing two values of one incomparable type panics.
	if reflect.TypeOf(ctx).Comparable() {
		c.slice.Store(s)
	}
	return s.ctx
}

// readBody reads a response's body to its end (so that its connection is
// kept), at most maxResponseBody bytes: into a buffer of the announced
// length when there is one, which real answers have.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n < maxResponseBody {
		buf := make([]byte, 0, n+1) // +1: the read that finds the end
		for {
			m, err := resp.Body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return buf, err
			}
			if len(buf) == cap(buf) {
				// Longer than announced: net/http fails such a body
				// before this; read the rest the usual way, bounded.
				rest, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody-int64(len(buf))))
				return append(buf, rest...), err
			}
		}
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
}

// CloseIdleConnections closes connections kept for reuse, so a server being
// shut down need not wait for them.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Response is the useful part of a 2xx answer (docs/cloud-api.md#success-answer).
type Response struct {
	WAMID         string // messages[0].id; every status webhook refers to it
	WaID          string // contacts[0].wa_id; may differ from the number sent
	MessageStatus string // "accepted", "held_for_quality_assessment" or "paused"; may be empty
}

// StatusHeld is the message_status of a send template pacing holds
// (docs/cloud-api.md#success-answer): accepted, released or dropped later.
const StatusHeld = "held_for_quality_assessment"

// Held says whether Meta holds the message for quality assessment.
func (r Response) Held() bool { return r.MessageStatus == StatusHeld }

// sending is what one Send shares with the transport, in one allocation
// (they were seven): its trace, which tells a written request from an
// unwritten one, and its body.
type sending struct {
	written atomic.Bool
	trace   httptrace.ClientTrace
	body    bytes.Reader
	data    []byte
}

// rewind is the request's GetBody: its body from the start.
func (s *sending) rewind() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(s.data)), nil
}

// Send posts one message. Errors are *APIError (the API answered with an
// error), *TransportError (no usable answer), or a validation error
// wrapping ErrInvalidRequest or ErrNoCredentials (nothing was sent).
func (c *Client) Send(ctx context.Context, req Request) (Response, error) {
	if req.PhoneNumberID == "" || req.Token == "" {
		return Response{}, fmt.Errorf("%w: phone number id and token are required", ErrNoCredentials)
	}
	body, err := BuildBody(req)
	if err != nil {
		return Response{}, err
	}
	post, err := c.postTo(req.PhoneNumberID, req.Marketing)
	if err != nil {
		return Response{}, err
	}
	ctx = c.requestContext(ctx)
	s := &sending{data: body}
	s.body.Reset(body)
	s.trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			s.written.Store(true)
		}
	}
	hreq := post.WithContext(httptrace.WithClientTrace(ctx, &s.trace))
	hreq.Header = c.header(req.Token)
	// As http.NewRequest sets a body of bytes: GetBody lets the transport
	// post it again on a fresh connection when a kept one was found closed
	// before anything was written. A *bytes.Reader under io.NopCloser, as
	// there: the transport writes the headers and such a body in one write.
	hreq.Body, hreq.ContentLength = io.NopCloser(&s.body), int64(len(body))
	hreq.GetBody = s.rewind

	resp, err := c.post(hreq)
	if err != nil {
		return Response{}, &TransportError{Written: s.written.Load(), Err: err}
	}
	defer resp.Body.Close()
	data, readErr := readBody(resp)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// An error status is an answer: the message was not accepted, even
		// if the body was cut short (it then counts as having no body).
		if readErr != nil {
			data = nil
		}
		apiErr := parseAPIError(resp.StatusCode, resp.Header, data, req.Token, c.now())
		apiErr.Marketing = req.Marketing
		return Response{}, apiErr
	}
	if readErr != nil {
		return Response{}, &TransportError{Written: true, Err: fmt.Errorf("read response: %w", readErr)}
	}
	ok, err := decodeSuccess(data)
	if err != nil {
		return Response{}, &TransportError{Written: true, Err: fmt.Errorf("HTTP %d with an unreadable body: %w", resp.StatusCode, err)}
	}
	if ok.messages.n == 0 || ok.id == "" {
		return Response{}, &TransportError{Written: true, Err: fmt.Errorf("HTTP %d without a message id", resp.StatusCode)}
	}
	r := Response{WAMID: ok.id, MessageStatus: ok.status}
	if ok.contacts.n > 0 {
		r.WaID = ok.waID
	}
	return r, nil
}
