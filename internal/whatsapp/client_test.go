package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "EAAG-SECRET-TOKEN-do-not-leak"

// captured is what the test server saw of one request.
type captured struct {
	method, path, rawPath, auth, contentType, body string
}

func newCaptureServer(t *testing.T, status int, answer string) (*httptest.Server, <-chan captured) {
	t.Helper()
	got := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- captured{r.Method, r.URL.Path, r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

const okAnswer = `{"messaging_product":"whatsapp","contacts":[{"input":"+16505551234","wa_id":"16505551234"}],` +
	`"messages":[{"id":"wamid.HBgLMTY0NjcwNDM1OTUVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA","message_status":"accepted"}]}`

func TestSendRequest(t *testing.T) {
	tests := []struct {
		name     string
		req      Request
		wantPath string
		wantBody string
	}{
		{
			name: "template with params",
			req: Request{PhoneNumberID: "106540352242922", Token: testToken, To: "+16505551234", CallbackData: "wasend:c1:m2",
				Template: &Template{Name: "wasend_demo", Lang: "en", BodyParams: []string{"Ana", "1234"}}},
			wantPath: "/v26.0/106540352242922/messages",
			wantBody: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"wasend_demo","language":{"code":"en","policy":"deterministic"},` +
				`"components":[{"type":"body","parameters":[{"type":"text","text":"Ana"},{"type":"text","text":"1234"}]}]},` +
				`"biz_opaque_callback_data":"wasend:c1:m2"}`,
		},
		{
			name:     "template without params",
			req:      Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Template: &Template{Name: "hello_world", Lang: "en_US"}},
			wantPath: "/v26.0/1/messages",
			wantBody: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"hello_world","language":{"code":"en_US","policy":"deterministic"}}}`,
		},
		{
			name: "marketing template through the Marketing Messages API: same body, its own edge",
			req: Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Marketing: true,
				Template: &Template{Name: "spring_sale", Lang: "en"}},
			wantPath: "/v26.0/1/marketing_messages",
			wantBody: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"spring_sale","language":{"code":"en","policy":"deterministic"}}}`,
		},
		{
			name:     "the send edge again, after the marketing edge of the same number",
			req:      Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Template: &Template{Name: "hello_world", Lang: "en_US"}},
			wantPath: "/v26.0/1/messages",
			wantBody: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"hello_world","language":{"code":"en_US","policy":"deterministic"}}}`,
		},
		{
			name:     "text with an id that needs escaping",
			req:      Request{PhoneNumberID: "a/b c", Token: testToken, To: "+16505551234", Text: "Hello"},
			wantPath: "/v26.0/a%2Fb%20c/messages",
			wantBody: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"text",` +
				`"text":{"preview_url":false,"body":"Hello"}}`,
		},
	}
	// One client for all: its requests are made once per number and edge.
	srv, got := newCaptureServer(t, http.StatusOK, okAnswer)
	c := New(Config{BaseURL: srv.URL + "/"}) // the trailing slash is trimmed
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Send(context.Background(), tt.req); err != nil {
				t.Fatalf("Send: %v", err)
			}
			g := <-got
			if g.method != http.MethodPost {
				t.Errorf("method = %s, want POST", g.method)
			}
			if g.rawPath != tt.wantPath {
				t.Errorf("path = %s, want %s", g.rawPath, tt.wantPath)
			}
			if g.auth != "Bearer "+testToken {
				t.Errorf("Authorization = %q", g.auth)
			}
			if g.contentType != "application/json" {
				t.Errorf("Content-Type = %q", g.contentType)
			}
			if g.body != tt.wantBody {
				t.Errorf("body:\n got %s\nwant %s", g.body, tt.wantBody)
			}
		})
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSendBodyRewindable: a request carries its body's length and a way to
// read the body again (GetBody), with which net/http posts it again on a
// fresh connection when a kept one was found closed before it was written.
func TestSendBodyRewindable(t *testing.T) {
	var got *http.Request
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(okAnswer)), ContentLength: int64(len(okAnswer))}, nil
	})
	c := New(Config{BaseURL: "http://wa.test", HTTPClient: &http.Client{Transport: rt}})
	req := Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"}
	want, err := BuildBody(req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := c.Send(context.Background(), req); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if got.ContentLength != int64(len(want)) || got.GetBody == nil {
			t.Fatalf("send %d: ContentLength %d (want %d), GetBody set %v", i, got.ContentLength, len(want), got.GetBody != nil)
		}
		for range 2 {
			rc, err := got.GetBody()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(rc); string(b) != string(want) {
				t.Errorf("send %d: GetBody read %s, want %s", i, b, want)
			}
		}
	}
}

// TestSendMarketingError: an error answer of the Marketing Messages API
// says so, and 131009 there is a template still syncing, not a bad row.
func TestSendMarketingError(t *testing.T) {
	srv, got := newCaptureServer(t, http.StatusBadRequest, `{"error":{"message":"(#131009) Parameter value is not valid","type":"OAuthException","code":131009}}`)
	c := New(Config{BaseURL: srv.URL})
	for _, marketing := range []bool{true, false} {
		_, err := c.Send(context.Background(), Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Marketing: marketing,
			Template: &Template{Name: "spring_sale", Lang: "en"}})
		<-got
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Marketing != marketing {
			t.Fatalf("marketing %v: err %v; want an *APIError that says where it went", marketing, err)
		}
		want := ClassPermanent
		if marketing {
			want = ClassTemplateSyncing
		}
		if got := Classify(err); got != want {
			t.Errorf("marketing %v: class %s, want %s", marketing, got, want)
		}
	}
}

func TestSendConfigVersion(t *testing.T) {
	srv, got := newCaptureServer(t, http.StatusOK, okAnswer)
	c := New(Config{BaseURL: srv.URL, Version: "v23.0"})
	if _, err := c.Send(context.Background(), Request{PhoneNumberID: "9", Token: testToken, To: "+16505551234", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g.path != "/v23.0/9/messages" {
		t.Errorf("path = %s", g.path)
	}
}

func TestNewDefaults(t *testing.T) {
	c := New(Config{})
	if c.baseURL != DefaultBaseURL || c.version != DefaultVersion || c.timeout != DefaultTimeout || c.hc == nil {
		t.Errorf("defaults = %q %q %v", c.baseURL, c.version, c.timeout)
	}
	hc := &http.Client{}
	New(Config{HTTPClient: hc})
	if hc.CheckRedirect != nil {
		t.Error("New modified the caller's http.Client")
	}
}

func TestSendResponses(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		want      Response
		wantErr   string // substring of the error; "" for success
		wantClass Class
	}{
		{
			name: "accepted", status: 200, body: okAnswer,
			want:      Response{WAMID: "wamid.HBgLMTY0NjcwNDM1OTUVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA", WaID: "16505551234", MessageStatus: "accepted"},
			wantClass: ClassOK,
		},
		{
			name: "held for quality assessment", status: 200,
			body:      `{"messaging_product":"whatsapp","contacts":[{"input":"+5511","wa_id":"5511"}],"messages":[{"id":"wamid.X","message_status":"held_for_quality_assessment"}]}`,
			want:      Response{WAMID: "wamid.X", WaID: "5511", MessageStatus: "held_for_quality_assessment"},
			wantClass: ClassOK,
		},
		{
			name: "no message status, no contacts", status: 201, body: `{"messages":[{"id":"wamid.Y"}]}`,
			want: Response{WAMID: "wamid.Y"}, wantClass: ClassOK,
		},
		{
			name: "2xx without message id", status: 200, body: `{"messaging_product":"whatsapp","messages":[]}`,
			wantErr: "may have been accepted: HTTP 200 without a message id", wantClass: ClassAmbiguous,
		},
		{
			name: "2xx garbage", status: 200, body: `<html>`,
			wantErr: "may have been accepted: HTTP 200 with an unreadable body", wantClass: ClassAmbiguous,
		},
		{
			name: "throttled with hints", status: 400,
			header: map[string]string{"Retry-After": "3", "X-Business-Use-Case-Usage": `{"77":[{"type":"whatsapp","estimated_time_to_regain_access":1}]}`},
			body: `{"error":{"message":"(#130429) Rate limit hit","type":"OAuthException","code":130429,` +
				`"error_data":{"messaging_product":"whatsapp","details":"Cloud API message throughput has been reached."},"fbtrace_id":"AbC"}}`,
			wantErr:   "graph error 130429 (HTTP 400): Rate limit hit: Cloud API message throughput has been reached. [fbtrace_id AbC]",
			wantClass: ClassThrottled,
		},
		{
			name: "expired token", status: 401,
			body:    `{"error":{"message":"(#190) Access token has expired","type":"OAuthException","code":190,"error_subcode":463,"fbtrace_id":"Z"}}`,
			wantErr: "graph error 190 (HTTP 401)", wantClass: ClassAccountFatal,
		},
		{
			// Meta's answer for a phone number id it does not know (or the
			// token may not use): the account is wrong, not the row.
			name: "unknown phone number id", status: 400,
			body:      `{"error":{"message":"Unsupported post request. Object with ID '1' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https:\/\/developers.facebook.com\/docs\/graph-api","type":"GraphMethodException","code":100,"error_subcode":33,"fbtrace_id":"AXf"}}`,
			wantErr:   "graph error 100 (HTTP 400): Unsupported post request. Object with ID '1' does not exist",
			wantClass: ClassAccountFatal,
		},
		{name: "proxy 503", status: 503, body: "upstream unavailable", wantErr: "HTTP 503 without a Graph error body", wantClass: ClassTransient},
		{name: "proxy 429", status: 429, wantErr: "HTTP 429 without a Graph error body", wantClass: ClassThrottled},
		{name: "redirect is not followed", status: 307, header: map[string]string{"Location": "/elsewhere"}, wantErr: "HTTP 307", wantClass: ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			got, err := New(Config{BaseURL: srv.URL}).Send(context.Background(),
				Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"})
			if c := Classify(err); c != tt.wantClass {
				t.Errorf("Classify = %v, want %v (err %v)", c, tt.wantClass, err)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				if got != tt.want {
					t.Errorf("Response = %+v, want %+v", got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestSendRetryAfter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.Header().Set("X-Business-Use-Case-Usage", `{"77":[{"type":"whatsapp","estimated_time_to_regain_access":0}]}`)
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"(#4) Application request limit reached","code":4}}`)
	}))
	defer srv.Close()
	_, err := New(Config{BaseURL: srv.URL}).Send(context.Background(), Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"})
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want *APIError", err)
	}
	if ae.RetryAfter != 3*time.Second || ae.Code != 4 {
		t.Errorf("APIError = %+v, want code 4 and RetryAfter 3s", ae)
	}
}

func TestSendRejectsBeforeSending(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request reached the server")
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL})
	tests := []struct {
		name string
		req  Request
		want Class
	}{
		{"no token", Request{PhoneNumberID: "1", To: "+16505551234", Text: "x"}, ClassAccountFatal},
		{"no phone number id", Request{Token: testToken, To: "+16505551234", Text: "x"}, ClassAccountFatal},
		{"bad number", Request{PhoneNumberID: "1", Token: testToken, To: "6505551234", Text: "x"}, ClassPermanent},
	}
	for _, tt := range tests {
		_, err := c.Send(context.Background(), tt.req)
		if got := Classify(err); got != tt.want {
			t.Errorf("%s: Classify(%v) = %v, want %v", tt.name, err, got, tt.want)
		}
	}
}

// refusedURL returns the address of a port that nobody listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// hijackServer reads the whole request, then drops the connection without
// answering: the request was written, the answer is lost.
func hijackServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// slowServer answers only after the client has given up.
func slowServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSendTransportErrors(t *testing.T) {
	tests := []struct {
		name        string
		baseURL     func(t *testing.T) string
		wantWritten bool
		wantClass   Class
	}{
		{"connection refused", refusedURL, false, ClassTransient},
		{"connection closed after the request", func(t *testing.T) string { return hijackServer(t).URL }, true, ClassAmbiguous},
		{"timeout after the request", func(t *testing.T) string { return slowServer(t).URL }, true, ClassAmbiguous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{BaseURL: tt.baseURL(t), Timeout: 200 * time.Millisecond})
			_, err := c.Send(context.Background(), Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"})
			var te *TransportError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *TransportError", err, err)
			}
			if te.Written != tt.wantWritten {
				t.Errorf("Written = %v, want %v (err %v)", te.Written, tt.wantWritten, err)
			}
			if got := Classify(err); got != tt.wantClass {
				t.Errorf("Classify = %v, want %v", got, tt.wantClass)
			}
		})
	}
}

func TestSendCancelledBeforeSending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv, _ := newCaptureServer(t, 200, okAnswer)
	_, err := New(Config{BaseURL: srv.URL}).Send(ctx, Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"})
	var te *TransportError
	if !errors.As(err, &te) || te.Written || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want an unwritten TransportError wrapping context.Canceled", err)
	}
}

// TestTokenNeverInErrors sends with a known token to servers that fail in
// every way, including ones that echo the Authorization header back.
func TestTokenNeverInErrors(t *testing.T) {
	echo := func(status int, format string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, format, r.Header.Get("Authorization"))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	urls := map[string]string{
		"graph error echoing the token": echo(400, `{"error":{"message":"(#100) bad %[1]s","type":"%[1]s","code":100,`+
			`"error_user_title":"%[1]s","error_data":{"details":"token %[1]s"},"fbtrace_id":"%[1]s"}}`),
		"plain body echoing the token":  echo(500, `%s`),
		"2xx garbage echoing the token": echo(200, `%s`),
		"refused":                       refusedURL(t),
		"hijacked":                      hijackServer(t).URL,
		"timeout":                       slowServer(t).URL,
	}
	for name, u := range urls {
		req := Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"}
		_, err := New(Config{BaseURL: u, Timeout: 200 * time.Millisecond}).Send(context.Background(), req)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), fmt.Sprint(req)} {
			if strings.Contains(s, "SECRET") {
				t.Errorf("%s: token leaked in %q", name, s)
			}
		}
	}
}

// TestSendHeadersPerToken: requests of one client with different tokens
// each carry their own (the headers are kept per token).
func TestSendHeadersPerToken(t *testing.T) {
	srv, got := newCaptureServer(t, http.StatusOK, okAnswer)
	c := New(Config{BaseURL: srv.URL})
	for _, token := range []string{"token-a", "token-b", "token-a", "token-c"} {
		if _, err := c.Send(context.Background(), Request{PhoneNumberID: "1", Token: token, To: "+16505551234", Text: "hi"}); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if g := <-got; g.auth != "Bearer "+token || g.contentType != "application/json" {
			t.Errorf("token %s: Authorization %q, Content-Type %q", token, g.auth, g.contentType)
		}
	}
}

// TestSendReadsBodiesAndKeepsConnections: a 2xx body is read whole whether
// its length is announced or chunked, and the connection serves the next
// request (a body not read to its end would close it).
func TestSendReadsBodiesAndKeepsConnections(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if !chunked {
				w.Header().Set("Content-Length", strconv.Itoa(len(okAnswer)))
			}
			for i := 0; i < len(okAnswer); i += 40 { // in pieces: chunks when no length is set
				io.WriteString(w, okAnswer[i:min(i+40, len(okAnswer))])
				w.(http.Flusher).Flush()
			}
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		c := New(Config{BaseURL: srv.URL})
		for range 5 {
			r, err := c.Send(context.Background(), Request{PhoneNumberID: "1", Token: testToken, To: "+16505551234", Text: "hi"})
			if err != nil || r.WAMID != "wamid.HBgLMTY0NjcwNDM1OTUVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA" || r.WaID != "16505551234" {
				t.Fatalf("chunked %v: Send = %+v, %v", chunked, r, err)
			}
		}
		c.CloseIdleConnections()
		srv.Close()
		if n := conns.Load(); n != 1 {
			t.Errorf("chunked %v: %d connections for 5 requests in turn, want 1", chunked, n)
		}
	}
}

// BenchmarkSend posts template messages through Send to a local server that
// answers at once, 64 at a time: allocations a request (the server's
// included, which no change to Send moves).
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okAnswer)
	}))
	b.Cleanup(srv.Close)
	c := New(Config{BaseURL: srv.URL})
	b.Cleanup(c.CloseIdleConnections)
	req := Request{PhoneNumberID: "106540352242922", Token: testToken, To: "+16505551234", CallbackData: "wasend:c1:m2",
		Template: &Template{Name: "wasend_demo", Lang: "en_US", BodyParams: []string{"Ada"}}}
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// incomparableCtx is a context of a type whose values cannot be compared.
type incomparableCtx struct {
	context.Context
	tags []string
}

// TestRequestContext: requests from one context that start within a slice
// share a deadline of at least the timeout, at most a slice more; another
// context, an expired slice or an incomparable context gets its own, and a
// cancelled context's requests are cancelled.
func TestRequestContext(t *testing.T) {
	const timeout = time.Hour
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	other := context.WithValue(context.Background(), testKey{}, 1)
	c := New(Config{Timeout: timeout})
	within := func(t *testing.T, ctx context.Context, before, after time.Time) {
		t.Helper()
		d, ok := ctx.Deadline()
		if !ok || d.Before(before.Add(timeout)) || d.After(after.Add(timeout+timeout/timeoutSlices)) {
			t.Errorf("deadline %v (%v), want within [%v, %v]", d, ok, before.Add(timeout), after.Add(timeout+timeout/timeoutSlices))
		}
	}
	before := time.Now()
	first := c.requestContext(parent)
	second := c.requestContext(parent)
	within(t, first, before, time.Now())
	if first != second {
		t.Error("two requests of one context in one slice have different contexts")
	}
	if o := c.requestContext(other); o == first || o.Value(testKey{}) != 1 {
		t.Error("another context's request shares the first's, or lost its values")
	}
	if again := c.requestContext(parent); again == first {
		t.Error("the slice of a context other than the last one's was reused")
	}
	c.slice.Load().until = time.Now().Add(-time.Nanosecond) // the slice has ended
	before = time.Now()
	next := c.requestContext(parent)
	within(t, next, before, time.Now())
	if next == first {
		t.Error("a request after the slice ended shares its context")
	}
	odd := incomparableCtx{Context: parent, tags: []string{"x"}}
	for range 2 { // the second compares with what the first left
		before = time.Now()
		within(t, c.requestContext(odd), before, time.Now())
	}
	cancelParent()
	if err := c.requestContext(parent).Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context's request: Err = %v, want context.Canceled", err)
	}
}

type testKey struct{}
