// Package sandbox is a local stand-in for the WhatsApp Cloud API send
// endpoint. It answers with Meta's shapes, enforces the per-number
// throughput and the pair rate limit on an injected clock, and injects
// faults from a seeded source so that a run can be replayed. Nothing it
// receives leaves the machine.
package sandbox

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"io"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/whatsapp"
)

// MarketingOnboarded is the onboarding status the sandbox gives a WABA
// Faults.Marketing does not name.
const MarketingOnboarded = "ONBOARDED"

// DemoTemplate is always approved. Its body is "Hi {{1}}, your code is
// {{2}}", but any number of parameters is accepted.
const DemoTemplate = "wasend_demo"

// Defaults of the real API (docs/cloud-api.md#throughput, #pair-rate).
const (
	DefaultThroughput   = 80.0
	DefaultPairInterval = 6 * time.Second
	// DefaultSlowDelay outlasts the client's default 20 s timeout, so a slow
	// answer is one the client gives up on.
	DefaultSlowDelay = 30 * time.Second
)

// RecordsPath serves everything received as a JSON array. It is not a
// Graph path, so it cannot collide with the API.
const RecordsPath = "/_sandbox/records"

// maxBody bounds a request body; real ones are a few kilobytes.
const maxBody = 1 << 20

// Outcomes in a Record.
const (
	OutcomeAccepted      = "accepted"
	OutcomeSlow          = "slow"    // accepted, answered after SlowDelay
	OutcomeDropped       = "dropped" // accepted, connection closed without an answer
	OutcomeThrottled     = "throttled"
	OutcomePairThrottled = "pair-throttled"
	OutcomeError         = "error" // any other Graph error
	// OutcomeIgnored is a 200 for a business-scoped user id sent in to:
	// Meta answers it with a message id and never delivers it.
	OutcomeIgnored = "ignored"
)

// Options configure a Server; zero values get defaults.
type Options struct {
	Now          func() time.Time // default time.Now
	Throughput   float64          // msg/s per phone number id; default 80, negative for no limit
	PairInterval time.Duration    // same number → same recipient; default 6s, negative for no limit
	Faults       Faults
	Record       io.Writer // optional: one JSON line per request
	// Latency delays every answer by Latency, give or take a uniform
	// draw within Jitter, like a distant API. The decision (limits,
	// faults, the record) is made when the request arrives.
	Latency  Latency
	Webhooks WebhookOptions
	// Card prices what pricing_analytics reports (nil: volumes only,
	// every cost 0).
	Card *pricing.Card
	// ServiceWindow refuses a text message (131047) from a number the
	// recipient did not write to within 24 h (window_cs.go).
	ServiceWindow bool
	// Wrote is who wrote to which number before the sandbox started, by
	// wa_id (digits, or a user id) and phone number id: the built-in
	// sandbox starts from what wasend's database holds.
	Wrote map[string]campaign.Wrote
}

// Latency is an answer delay: Base ± Jitter, uniformly.
type Latency struct {
	Base, Jitter time.Duration
}

// String gives the form ParseLatency reads.
func (l Latency) String() string {
	if l.Jitter == 0 {
		return l.Base.String()
	}
	return l.Base.String() + "±" + l.Jitter.String()
}

// Faults are injected failures. Probabilities are in [0, 1]; each request
// that passes validation draws the same sequence of numbers from a source
// seeded with Seed, so a seed replays whatever else is configured.
type Faults struct {
	Seed        int64
	Throttle    float64 // answer 130429 (HTTP 400)
	ServerError float64 // answer 131000 (HTTP 500)
	// Drop accepts the message, then closes the connection without
	// answering: the case that makes resending unsafe.
	Drop float64
	// Slow accepts the message and answers after SlowDelay.
	Slow      float64
	SlowDelay time.Duration // default DefaultSlowDelay

	CodeProb      map[int]float64         // any Graph code with a probability
	FailNumbers   map[string]int          // recipient E.164 → code always returned
	FatalAccounts map[string]FatalAccount // phone number id → fatal code
	BadTemplates  []string                // template names answering 132001 (HTTP 404)
	RetryAfter    time.Duration           // when > 0, throttling answers carry Retry-After
	// UnknownNumbers are phone number ids Graph does not find: reading one
	// answers 400, code 100, subcode 33 (so does any id not all digits), and
	// so does sending from one, as Meta does for a mistyped or deleted id.
	UnknownNumbers []string
	// BadTokens are access tokens answered 401, code 190.
	BadTokens []string
	// Numbers says what reading a phone number id answers beyond the
	// defaults (GREEN, STANDARD throughput, TIER_UNLIMITED, APPROVED).
	Numbers map[string]Number
	// MarketingSync is how long a template answers 131009 on
	// /marketing_messages after its first request there, as a template new
	// to the Marketing Messages API does while it syncs.
	MarketingSync time.Duration
	// Marketing is each WABA's marketing_messages_onboarding_status; a
	// WABA not listed is MarketingOnboarded.
	Marketing map[string]string
	// Upgrade makes a phone number id answer 131057 (maintenance for a
	// throughput upgrade) for this long from its first request; with
	// webhooks on, its first message after the window is followed by a
	// phone_number_quality_update THROUGHPUT_UPGRADE.
	Upgrade map[string]time.Duration
	// Held is template pacing: a share of accepted template sends answered
	// message_status held_for_quality_assessment, each settled by status
	// webhooks after HeldFor: released (sent, then as any message) or,
	// for a share HeldDrop of them, dropped (failed with HeldDropCode).
	Held     float64
	HeldDrop float64
	HeldFor  time.Duration // default DefaultHeldFor
}

// DefaultHeldFor is how long the sandbox holds a held send before its
// status settles it (Meta: minutes to an hour; the sandbox is quick).
const DefaultHeldFor = 2 * time.Second

// HeldDropCode is the error of a dropped held send's failed status: the
// template paused for its quality (132015; the code Meta uses for a
// dropped held message is not confirmed, docs/cloud-api.md#success-answer).
const HeldDropCode = 132015

// Number is what the Graph API says of one business number. Empty fields
// take the defaults; MessagingLimit "-" leaves the field out of the answer,
// as for a number whose limit can't be read.
type Number struct {
	QualityRating   string // GREEN, YELLOW, RED
	ThroughputLevel string // STANDARD, HIGH
	MessagingLimit  string // TIER_250, TIER_2K, TIER_10K, TIER_100K, TIER_UNLIMITED
	NameStatus      string
}

// FatalAccount makes a phone number id answer Code once After messages
// were accepted for it (After 0: from the first request).
type FatalAccount struct {
	Code  int
	After int
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	f := o.Faults
	probs := []struct {
		name string
		p    float64
	}{{"throttle", f.Throttle}, {"server error", f.ServerError}, {"drop", f.Drop}, {"slow", f.Slow},
		{"held", f.Held}, {"held drop", f.HeldDrop}}
	for code, p := range f.CodeProb {
		probs = append(probs, struct {
			name string
			p    float64
		}{fmt.Sprintf("code %d", code), p})
	}
	for _, pr := range probs {
		if !(pr.p >= 0 && pr.p <= 1) {
			return fmt.Errorf("%s probability %v: must be between 0 and 1", pr.name, pr.p)
		}
	}
	if o.Latency.Base < 0 || o.Latency.Jitter < 0 || o.Latency.Jitter > o.Latency.Base {
		return fmt.Errorf("latency %v: want D or D±J with 0 ≤ J ≤ D", o.Latency)
	}
	if err := o.Webhooks.Validate(); err != nil {
		return err
	}
	if f.HeldFor < 0 {
		return fmt.Errorf("held for %v: must not be negative", f.HeldFor)
	}
	if f.SlowDelay < 0 {
		return fmt.Errorf("slow delay %v: must not be negative", f.SlowDelay)
	}
	for id, fa := range f.FatalAccounts {
		if fa.After < 0 {
			return fmt.Errorf("fatal account %s: after %d must not be negative", id, fa.After)
		}
	}
	for num := range f.FailNumbers {
		if waID(num) == "" {
			return fmt.Errorf("fail number %q: not a phone number", num)
		}
	}
	return nil
}

// Record is one request the sandbox received.
type Record struct {
	At            time.Time `json:"at"`
	PhoneNumberID string    `json:"phone_number_id"`
	To            string    `json:"to,omitempty"`
	Recipient     string    `json:"recipient,omitempty"` // a business-scoped user id, sent in recipient
	Template      string    `json:"template,omitempty"`
	CallbackData  string    `json:"callback_data,omitempty"`
	HTTPStatus    int       `json:"http_status"`
	Code          int       `json:"code"` // Graph error code; 0 when accepted
	Outcome       string    `json:"outcome"`
	WAMID         string    `json:"wamid,omitempty"`
	// Delivery is what the status webhooks of an accepted message will
	// report it ended as (read, delivered, failed), with webhooks on.
	Delivery string `json:"delivery,omitempty"`
	// Marketing: the request came to /marketing_messages.
	Marketing bool `json:"marketing,omitempty"`
	// Held: answered held_for_quality_assessment (Faults.Held).
	Held bool `json:"held,omitempty"`
}

// Server is the stand-in API. It is safe for concurrent use.
type Server struct {
	now          func() time.Time
	throughput   float64
	pairInterval time.Duration
	faults       Faults
	latency      Latency
	codeProbs    []int // codes of faults.CodeProb in ascending order, for a stable draw order
	failNumbers  map[string]int
	badTemplates map[string]bool
	nonce        string // keeps wamids unique across sandbox restarts

	mu         sync.Mutex // guards everything below
	rng        *mathrand.Rand
	delays     *mathrand.Rand // its own source: latency leaves the fault draws as they were
	buckets    map[string]*bucket
	lastSent   map[pairKey]time.Time
	acceptedBy map[string]int // phone number id → accepted messages
	// firstMarketing: when each template was first asked for on
	// /marketing_messages (Faults.MarketingSync); firstRequest: each phone
	// number id's first send (Faults.Upgrade).
	firstMarketing map[string]time.Time
	firstRequest   map[string]time.Time
	upgraded       map[string]bool // the upgrade webhook was posted
	accepted       map[string]int  // recipient → accepted messages
	records        []Record
	seq            uint64
	record         io.Writer
	recordErr      error
	hooks          *webhooker                 // nil without webhooks
	wabaTmpl       map[string]json.RawMessage // WABA id → its templates, in place of sandboxTemplates
	card           *pricing.Card              // prices pricing_analytics (nil: costs 0)
	// unsubscribed are the WABAs whose webhooks the sandbox's app is not
	// subscribed to (SetSubscribed).
	unsubscribed map[string]bool
	tmplReads    []TemplateRead
	// windows is who wrote to which number when (window_cs.go), shared
	// with the webhooks.
	windows       *windows
	serviceWindow bool
}

type pairKey struct{ phoneNumberID, waID string }

// New returns a Server for opts. Call opts.Validate first for user input;
// New clamps what it cannot use.
func New(opts Options) *Server {
	s := &Server{
		now:            opts.Now,
		throughput:     opts.Throughput,
		pairInterval:   opts.PairInterval,
		faults:         opts.Faults,
		latency:        opts.Latency,
		card:           opts.Card,
		delays:         mathrand.New(mathrand.NewSource(opts.Faults.Seed)),
		failNumbers:    make(map[string]int),
		badTemplates:   make(map[string]bool),
		rng:            mathrand.New(mathrand.NewSource(opts.Faults.Seed)),
		buckets:        make(map[string]*bucket),
		lastSent:       make(map[pairKey]time.Time),
		acceptedBy:     make(map[string]int),
		firstMarketing: make(map[string]time.Time),
		firstRequest:   make(map[string]time.Time),
		upgraded:       make(map[string]bool),
		accepted:       make(map[string]int),
		record:         opts.Record,
		serviceWindow:  opts.ServiceWindow,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.windows = newWindows(s.now, opts.Wrote)
	if s.throughput == 0 {
		s.throughput = DefaultThroughput
	}
	if s.pairInterval == 0 {
		s.pairInterval = DefaultPairInterval
	}
	if s.faults.SlowDelay <= 0 {
		s.faults.SlowDelay = DefaultSlowDelay
	}
	// Copy the maps so the caller cannot race with the handlers.
	s.faults.CodeProb = make(map[int]float64, len(opts.Faults.CodeProb))
	for code, p := range opts.Faults.CodeProb {
		s.faults.CodeProb[code] = p
		s.codeProbs = append(s.codeProbs, code)
	}
	slices.Sort(s.codeProbs)
	s.faults.FatalAccounts = make(map[string]FatalAccount, len(opts.Faults.FatalAccounts))
	for id, fa := range opts.Faults.FatalAccounts {
		s.faults.FatalAccounts[id] = fa
	}
	for num, code := range opts.Faults.FailNumbers {
		s.failNumbers[waID(num)] = code
	}
	s.faults.UnknownNumbers = slices.Clone(opts.Faults.UnknownNumbers)
	s.faults.BadTokens = slices.Clone(opts.Faults.BadTokens)
	for _, name := range opts.Faults.BadTemplates {
		s.badTemplates[name] = true
	}
	var n [6]byte
	_, _ = rand.Read(n[:]) // crypto/rand.Read never fails on supported platforms
	s.nonce = base64.RawURLEncoding.EncodeToString(n[:])
	if opts.Webhooks.URL != "" {
		s.hooks = newWebhooker(opts.Webhooks, s.windows)
	}
	return s
}

// ServeHTTP serves POST /{version}/{phone_number_id}/messages,
// GET /{version}/{phone_number_id}, GET /{version}/{waba_id}/message_templates,
// GET /{version}/{waba_id}/subscribed_apps and GET RecordsPath.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == RecordsPath {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeGraphError(w, http.StatusMethodNotAllowed, 100, "use GET "+RecordsPath, "", 0)
			return
		}
		writeJSON(w, http.StatusOK, s.Records())
		return
	}
	if v, ok := pathVersion(r.URL); ok && !servedVersion(v) {
		writeGraphError(w, http.StatusBadRequest, 100, fmt.Sprintf("Graph API %s is not a version Meta released; the current is %s, the previous %s: set WASEND_API_VERSION to one of them, or unset it",
			v, whatsapp.DefaultVersion, whatsapp.PreviousVersion), "", 0)
		return
	}
	if id, ok := phoneNumberPath(r.URL); ok {
		s.servePhoneNumber(w, r, id)
		return
	}
	if _, ok := templatesPath(r.URL); ok {
		s.serveTemplates(w, r)
		return
	}
	if waba, ok := wabaEdgePath(r.URL, "pricing_analytics"); ok {
		s.servePricingAnalytics(w, r, waba)
		return
	}
	if waba, ok := wabaEdgePath(r.URL, "subscribed_apps"); ok {
		s.serveSubscribedApps(w, r, waba)
		return
	}
	phoneNumberID, marketing, ok := messagesPath(r.URL)
	if !ok {
		writeGraphError(w, http.StatusNotFound, 100, fmt.Sprintf("unknown path %s; the sandbox serves POST /{version}/{phone_number_id}/messages", r.URL.Path), "", 0)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeGraphError(w, http.StatusMethodNotAllowed, 100, fmt.Sprintf("method %s is not supported on %s", r.Method, r.URL.Path), "", 0)
		return
	}
	s.serveMessages(w, r, phoneNumberID, marketing)
}

// pathVersion is the version segment a Graph path starts with (/vNN.N/…).
func pathVersion(u *url.URL) (string, bool) {
	first, _, _ := strings.Cut(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(first) < 2 || first[0] != 'v' || first[1] < '0' || first[1] > '9' {
		return "", false
	}
	return first, true
}

// servedVersion: the sandbox serves the Graph API versions in wasend's
// table (whatsapp.Versions) — the current and the previous one, and as
// Meta does an older one (whose calls Meta answers as the oldest version
// still working) — and refuses a version Meta never released, a set-up
// to fix rather than one to emulate.
func servedVersion(v string) bool {
	_, ok := whatsapp.LookupVersion(v)
	return ok
}

// messagesPath extracts the phone number id from /vNN.N/{id}/messages or
// /vNN.N/{id}/marketing_messages (marketing), unescaping it as the real API
// would.
func messagesPath(u *url.URL) (id string, marketing bool, ok bool) {
	parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(parts) != 3 || len(parts[0]) < 2 || parts[0][0] != 'v' || (parts[2] != "messages" && parts[2] != whatsapp.MarketingEdge) {
		return "", false, false
	}
	id, err := url.PathUnescape(parts[1])
	if err != nil || id == "" {
		return "", false, false
	}
	return id, parts[2] == whatsapp.MarketingEdge, true
}

// bearerToken returns the token of "Authorization: Bearer <token>", or "".
func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// answer is what the sandbox decided for one request.
type answer struct {
	status     int
	code       int
	details    string
	traceID    string
	retryAfter time.Duration
	outcome    string
	wamid      string
	to         string        // the request's to (or recipient) as written
	waID       string        // the person: a number's digits, or a user id (person)
	userIDInTo bool          // a user id sent in to: answered, never delivered
	delay      time.Duration // before answering: Options.Latency
	delivery   string        // the final status webhooks will report
	early      [][]byte      // status webhooks to post before answering
	// unknownID: the phone number id does not exist; answered with Graph's
	// object error (code 100, subcode 33), not a WhatsApp one.
	unknownID bool
	held      bool // answered held_for_quality_assessment
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, phoneNumberID string, marketing bool) {
	// Read the whole request first: a dropped answer must come after the
	// client has finished writing, like a response lost on the way back.
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))

	var (
		msg  inMessage
		rerr *requestError
	)
	switch {
	case readErr != nil:
		var tooBig *http.MaxBytesError
		if errors.As(readErr, &tooBig) {
			rerr = invalid("request body is larger than %d bytes", maxBody)
		} else {
			rerr = invalid("reading the request body: %v", readErr)
		}
	default:
		msg, rerr = parseMessage(body)
	}
	a := s.decide(phoneNumberID, bearerToken(r), msg, rerr, marketing)
	if len(a.early) > 0 {
		// The statuses reach the receiver before the sender has the wamid.
		s.hooks.postEarly(a.early)
	}

	if d := a.delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			abort(w)
			return
		}
	}
	switch a.outcome {
	case OutcomeDropped:
		abort(w)
		return
	case OutcomeSlow:
		t := time.NewTimer(s.faults.SlowDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			// The client gave up or the server is shutting down; closing
			// beats sending an empty 200 that would look like a success.
			abort(w)
			return
		}
	}
	if a.unknownID {
		writeGraphErrorSubcode(w, a.status, a.code, 33, "GraphMethodException", a.details, a.traceID)
		return
	}
	if a.wamid == "" {
		writeGraphError(w, a.status, a.code, a.details, a.traceID, a.retryAfter)
		return
	}
	writeJSON(w, a.status, successBody{
		MessagingProduct: "whatsapp",
		Contacts:         []contact{a.contact()},
		Messages:         []message{{ID: a.wamid, MessageStatus: a.messageStatus()}},
	})
}

// messageStatus is the success body's messages[0].message_status.
func (a *answer) messageStatus() string {
	if a.held {
		return "held_for_quality_assessment"
	}
	return "accepted"
}

// contact is the success body's contacts entry: wa_id for a send to a
// number, user_id for one to a business-scoped user id.
func (a *answer) contact() contact {
	if isUserID(a.waID) {
		return contact{Input: a.to, UserID: a.waID}
	}
	return contact{Input: a.to, WaID: a.waID}
}

// fail turns a into a Graph error answer. Only throttling answers carry
// retryAfter, as only they have a natural time to wait.
func (a *answer) fail(code int, details string, retryAfter time.Duration) {
	a.status, a.code, a.details = httpStatus(code), code, details
	switch code {
	case 130429:
		a.outcome = OutcomeThrottled
	case 131056:
		a.outcome = OutcomePairThrottled
	default:
		a.outcome = OutcomeError
		return
	}
	a.retryAfter = retryAfter
}

// abort closes the connection without an answer.
func abort(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// HTTP/2 cannot hijack; this is net/http's sanctioned way to abort a
	// response, recovered by the server without logging.
	panic(http.ErrAbortHandler)
}

// decide applies authentication, validation, account faults, limits and
// random faults, in that order, and records the result. It holds the lock
// for the whole decision so that limits and counters stay consistent under
// concurrent requests.
func (s *Server) decide(phoneNumberID, token string, msg inMessage, rerr *requestError, marketing bool) answer {
	s.mu.Lock()
	defer s.mu.Unlock()

	now := s.now()
	s.seq++
	who, inTo := person(msg)
	a := answer{to: msg.To, waID: who, traceID: s.traceID(), delay: s.latency.Base, userIDInTo: inTo}
	if msg.To == "" {
		a.to = msg.Recipient
	}
	if j := s.latency.Jitter; j > 0 {
		a.delay += time.Duration((2*s.delays.Float64() - 1) * float64(j))
	}
	s.decideLocked(&a, now, phoneNumberID, token, msg, rerr, marketing)

	rec := Record{
		At:            now,
		PhoneNumberID: phoneNumberID,
		To:            msg.To,
		Recipient:     msg.Recipient,
		CallbackData:  msg.CallbackData,
		HTTPStatus:    a.status,
		Code:          a.code,
		Outcome:       a.outcome,
		WAMID:         a.wamid,
		Delivery:      a.delivery,
		Marketing:     marketing,
		Held:          a.held,
	}
	if msg.Template != nil {
		rec.Template = msg.Template.Name
	}
	s.records = append(s.records, rec)
	if s.record != nil && s.recordErr == nil {
		line, err := json.Marshal(rec)
		if err == nil {
			_, err = s.record.Write(append(line, '\n'))
		}
		s.recordErr = err
	}
	return a
}

func (s *Server) decideLocked(a *answer, now time.Time, phoneNumberID, token string, msg inMessage, rerr *requestError, marketing bool) {
	fail := func(code int, details string) { a.fail(code, details, s.faults.RetryAfter) }
	if token == "" {
		fail(190, "missing or empty bearer token in the Authorization header")
		return
	}
	if slices.Contains(s.faults.BadTokens, token) {
		fail(190, "Invalid OAuth access token - Cannot parse access token")
		return
	}
	// Only the listed ids: the sandbox's own tests send from ids such as
	// "A", which reads (servePhoneNumber) would call unknown.
	if slices.Contains(s.faults.UnknownNumbers, phoneNumberID) {
		a.status, a.code, a.outcome, a.unknownID = http.StatusBadRequest, 100, OutcomeError, true
		a.details = fmt.Sprintf("Unsupported post request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api", phoneNumberID)
		return
	}
	if rerr != nil {
		fail(rerr.code, rerr.details)
		return
	}
	if fa, ok := s.faults.FatalAccounts[phoneNumberID]; ok && s.acceptedBy[phoneNumberID] >= fa.After {
		fail(fa.Code, fmt.Sprintf("sandbox: phone number id %s is configured to fail after %d accepted messages", phoneNumberID, fa.After))
		return
	}
	if d, ok := s.faults.Upgrade[phoneNumberID]; ok {
		first, seen := s.firstRequest[phoneNumberID]
		if !seen {
			first = now
			s.firstRequest[phoneNumberID] = now
		}
		if now.Before(first.Add(d)) {
			fail(131057, fmt.Sprintf("Business Account is in maintenance mode: phone number id %s is being upgraded to a higher throughput (sandbox: for %v)", phoneNumberID, d))
			return
		}
	}
	// Every request from here on spends a token, whatever its answer: Meta
	// counts requests, not successes, against throughput.
	if s.throughput > 0 {
		b := s.buckets[phoneNumberID]
		if b == nil {
			b = newBucket(s.throughput, now)
			s.buckets[phoneNumberID] = b
		}
		if !b.allow(now) {
			fail(130429, fmt.Sprintf("Cloud API message throughput has been reached (sandbox limit %g msg/s for phone number id %s).", s.throughput, phoneNumberID))
			return
		}
	}
	if msg.Template != nil && s.badTemplates[msg.Template.Name] {
		fail(132001, fmt.Sprintf("template name (%s) does not exist in %s", msg.Template.Name, msg.Template.Language.Code))
		return
	}
	if marketing && (msg.Template == nil || s.categoryOf(msg) != string(pricing.Marketing)) {
		// Meta's Marketing Messages API takes marketing templates only.
		fail(131055, "(#131055) Method not allowed: only marketing template messages are supported")
		return
	}
	if marketing && msg.Template != nil && s.faults.MarketingSync > 0 {
		name := msg.Template.Name + "/" + msg.Template.Language.Code
		first, seen := s.firstMarketing[name]
		if !seen {
			first = now
			s.firstMarketing[name] = now
		}
		if now.Before(first.Add(s.faults.MarketingSync)) {
			fail(131009, fmt.Sprintf("template %s is not yet synced to the Marketing Messages API; try again in a few minutes (sandbox: %v after its first request)", name, s.faults.MarketingSync))
			return
		}
	}
	if code, ok := s.failNumbers[a.waID]; ok {
		fail(code, fmt.Sprintf("sandbox: recipient %s is configured to fail with %d", msg.To, code))
		return
	}
	if why := s.outsideWindowLocked(msg, phoneNumberID, a.waID, now); why != "" {
		fail(131047, why)
		return
	}
	pair := pairKey{phoneNumberID, a.waID}
	if last, ok := s.lastSent[pair]; ok && s.pairInterval > 0 && now.Sub(last) < s.pairInterval {
		fail(131056, fmt.Sprintf("Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time (sandbox: one per %v).", s.pairInterval))
		return
	}

	// Draw every number for every request, so that the sequence does not
	// depend on which fault fires first.
	f := s.faults
	throttle, serverErr := s.rng.Float64(), s.rng.Float64()
	codeDraws := make([]float64, len(s.codeProbs))
	for i := range codeDraws {
		codeDraws[i] = s.rng.Float64()
	}
	drop, slow := s.rng.Float64(), s.rng.Float64()
	switch {
	case throttle < f.Throttle:
		fail(130429, "Cloud API message throughput has been reached. (sandbox fault)")
		return
	case serverErr < f.ServerError:
		fail(131000, "Something went wrong. (sandbox fault)")
		return
	}
	for i, code := range s.codeProbs {
		if codeDraws[i] < f.CodeProb[code] {
			fail(code, fmt.Sprintf("%s (sandbox fault)", title(code)))
			return
		}
	}

	a.status = http.StatusOK
	a.outcome = OutcomeAccepted
	a.wamid = s.wamid(a.waID)
	switch {
	case drop < f.Drop:
		a.outcome = OutcomeDropped
	case slow < f.Slow:
		a.outcome = OutcomeSlow
	}
	if a.userIDInTo {
		// Meta's answer to a user id in to: 200 and a message id, then
		// nothing: no delivery, no status webhook.
		a.outcome = OutcomeIgnored
		return
	}
	s.lastSent[pair] = now
	s.acceptedBy[phoneNumberID]++
	s.accepted[acceptedKey(a.waID)]++
	// Drawn only when on, so a seed replays what it did before held sends.
	var hold heldFate
	if f.Held > 0 && msg.Template != nil && s.rng.Float64() < f.Held {
		a.held, hold.For, hold.Drop = true, f.HeldFor, f.HeldDrop > 0 && s.rng.Float64() < f.HeldDrop
		if hold.For == 0 {
			hold.For = DefaultHeldFor
		}
	}
	if s.hooks != nil {
		var after [][]byte
		if _, ok := s.faults.Upgrade[phoneNumberID]; ok && !s.upgraded[phoneNumberID] {
			// The window is over: Meta says so with the upgrade webhook,
			// after the first message's statuses name the number.
			s.upgraded[phoneNumberID] = true
			after = append(after, upgradeBody(phoneNumberID))
		}
		a.delivery, a.early = s.hooks.plan(phoneNumberID, a.wamid, a.waID, msg.CallbackData, s.categoryOf(msg), now, hold, after...)
	}
}

// wamid looks like Meta's (base64 of an opaque id) and is unique per server
// and across restarts.
func (s *Server) wamid(waID string) string {
	raw := fmt.Sprintf("SBX.%s.%s.%d", s.nonce, waID, s.seq)
	return "wamid." + base64.StdEncoding.EncodeToString([]byte(raw))
}

func (s *Server) traceID() string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.seq)
	return "SBX" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Records returns a copy of everything received, in order.
func (s *Server) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record{}, s.records...)
}

// Accepted returns how many times each recipient ("+" and digits) was
// accepted, dropped and slow answers included: more than one means a
// duplicate message.
func (s *Server) Accepted() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int, len(s.accepted))
	for k, v := range s.accepted {
		m[k] = v
	}
	return m
}

// RecordErr returns the first error writing to Options.Record; recording
// stops after it.
func (s *Server) RecordErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordErr
}
