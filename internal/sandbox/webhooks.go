package sandbox

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mathrand "math/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WebhookOptions make the sandbox post signed status webhooks for every
// message it accepts, as Meta does: sent, delivered, read — sometimes
// twice, sometimes out of order — or sent then failed with 131049.
type WebhookOptions struct {
	URL       string // where to POST; empty: no webhooks
	AppSecret []byte // key of X-Hub-Signature-256
	Seed      int64
	// Probabilities, each in [0, 1].
	Read      float64 // a delivered message is also read
	Duplicate float64 // a status is posted twice
	Reorder   float64 // a message's statuses are posted in shuffled order
	Fail      float64 // an accepted message fails later with 131049
	// OptOut: an accepted message fails later with 131050, the person
	// having stopped marketing messages.
	OptOut float64
	// LateFail: a delivered (or read) message is then reported failed
	// with 131049, as a late contradiction.
	LateFail float64
	// Early: a message's statuses are posted before its send is answered,
	// without callback data (Meta may leave it out): they reach the
	// receiver before the sender has recorded the wamid.
	Early float64
	// Inbound messages, posted after a delivered (or read) message's
	// statuses, as the person's answer: Reply, a text answer (quoting our
	// message half the time); Stop, the text STOP; StopButton, a tap on
	// the marketing opt-out button ("Stop promotions"). One answer at
	// most per message, drawn in that order from a source of their own.
	Reply, Stop, StopButton float64
	// Delay is how long after acceptance the statuses go out.
	Delay  time.Duration
	Client *http.Client
}

// Validate reports options that cannot work.
func (o WebhookOptions) Validate() error {
	if o.URL == "" {
		return nil
	}
	if len(o.AppSecret) == 0 {
		return fmt.Errorf("webhooks need an app secret to sign with")
	}
	for name, p := range map[string]float64{"read": o.Read, "duplicate": o.Duplicate, "reorder": o.Reorder, "fail": o.Fail,
		"opt-out": o.OptOut, "late-fail": o.LateFail, "early": o.Early, "reply": o.Reply, "stop": o.Stop, "stop-button": o.StopButton} {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("webhook %s probability %v: must be between 0 and 1", name, p)
		}
	}
	if o.Delay < 0 {
		return fmt.Errorf("webhook delay %v: must not be negative", o.Delay)
	}
	return nil
}

// Delivery is the sandbox's own record of what it reported for one
// accepted message: the judge of the end-to-end tests.
type Delivery struct {
	WAMID        string
	To           string
	CallbackData string
	Final        string // read, delivered or failed
	Code         int    // 131049 or 131050 when failed (after delivered or read with LateFail)
	Posted       int    // status bodies posted, duplicates included
	// Statuses are the statuses posted, once each, in the order posted.
	Statuses []string
	Early    bool // posted before the send was answered, without callback data
	// Answer is what the person sent back: "" (nothing), "reply", "stop"
	// or "stop-button"; AnswerID is its message id.
	Answer   string
	AnswerID string
	// Pricing, as its sent and delivered statuses say: the template's
	// category ("service" for a text) and the type (regular, or free in
	// a customer service window the person's answer opened); At is when
	// it was delivered (what pricing_analytics counts).
	Category, PricingType string
	At                    time.Time
	// Held: the send was answered held_for_quality_assessment; its
	// statuses came when the sandbox released (or dropped) it.
	Held bool
}

// webhooker posts the statuses of accepted messages. Its draws come from
// a source of its own, so turning webhooks on does not change the faults
// a seed replays.
type webhooker struct {
	o   WebhookOptions
	rng *mathrand.Rand // guarded by Server.mu: plans are drawn in decide
	// answers draws the inbound answers, apart from rng so that turning
	// them on changes no status a seed replays.
	answers *mathrand.Rand
	client  *http.Client
	sem     chan struct{} // bounds posts in flight
	hurry   chan struct{} // closed by Flush: no more waiting for Delay
	wg      sync.WaitGroup

	mu         sync.Mutex
	deliveries map[string]*Delivery
	windows    *windows // the Server's: who wrote to which number when
	failures   int      // posts that never got a 200
	hurried    bool
}

func newWebhooker(o WebhookOptions, w *windows) *webhooker {
	c := o.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	return &webhooker{o: o, rng: mathrand.New(mathrand.NewSource(o.Seed)), answers: mathrand.New(mathrand.NewSource(o.Seed + 1)), client: c,
		sem: make(chan struct{}, 16), hurry: make(chan struct{}), deliveries: map[string]*Delivery{}, windows: w}
}

// heldFate is what becomes of a held send (Faults.Held): its statuses go
// out For later, and Drop makes them one failed status (HeldDropCode).
type heldFate struct {
	For  time.Duration
	Drop bool
}

type plannedStatus struct {
	status string
	at     time.Time
	code   int
}

// drawn draws whether an option of probability p fires. An option left
// at 0 draws nothing, so a seed replays what it did before the option
// existed.
func (h *webhooker) drawn(p float64) bool {
	return p > 0 && h.rng.Float64() < p
}

// plan draws the statuses of one accepted message and posts them in the
// background, or returns them to be posted before the answer (early). The
// caller holds Server.mu.
func (h *webhooker) plan(phoneNumberID, wamid, waID, callback, category string, now time.Time, hold heldFate, after ...[]byte) (final string, early [][]byte) {
	now = now.Add(hold.For) // a held send goes on (or is dropped) when released
	sts := []plannedStatus{{status: "sent", at: now.Add(time.Second)}}
	d := &Delivery{WAMID: wamid, To: acceptedKey(waID), CallbackData: callback, At: now.Add(2 * time.Second), Held: hold.For > 0}
	d.Category, d.PricingType = h.pricing(phoneNumberID, waID, category, now)
	fail, read, reorder := h.rng.Float64() < h.o.Fail, h.rng.Float64() < h.o.Read, h.rng.Float64() < h.o.Reorder
	optOut, lateFail, isEarly := h.drawn(h.o.OptOut), h.drawn(h.o.LateFail), h.drawn(h.o.Early)
	if hold.For > 0 {
		isEarly = false // a held send's statuses come after its answer
	}
	switch {
	case hold.Drop:
		// Dropped: it never left Meta, so no sent; one failed status.
		sts = []plannedStatus{{status: "failed", at: now, code: HeldDropCode}}
		d.Final, d.Code = "failed", HeldDropCode
	case optOut:
		sts = append(sts, plannedStatus{status: "failed", at: now.Add(2 * time.Second), code: 131050})
		d.Final, d.Code = "failed", 131050
	case fail:
		sts = append(sts, plannedStatus{status: "failed", at: now.Add(2 * time.Second), code: 131049})
		d.Final, d.Code = "failed", 131049
	case read:
		// Delivered and read at once: Meta then sends no delivered.
		if h.rng.Float64() < 0.8 {
			sts = append(sts, plannedStatus{status: "delivered", at: now.Add(2 * time.Second)})
		}
		sts = append(sts, plannedStatus{status: "read", at: now.Add(30 * time.Second)})
		d.Final = "read"
	default:
		sts = append(sts, plannedStatus{status: "delivered", at: now.Add(2 * time.Second)})
		d.Final = "delivered"
	}
	if lateFail && d.Final != "failed" {
		sts = append(sts, plannedStatus{status: "failed", at: now.Add(time.Minute), code: 131049})
		d.Code = 131049
	}
	if isEarly {
		callback, d.Early = "", true
	}
	if reorder {
		h.rng.Shuffle(len(sts), func(i, j int) { sts[i], sts[j] = sts[j], sts[i] })
	}
	var out []plannedStatus
	for _, s := range sts {
		out = append(out, s)
		if h.rng.Float64() < h.o.Duplicate {
			out = append(out, s)
		}
	}
	bodies := make([][]byte, len(out))
	for i, s := range out {
		bodies[i] = statusBody(phoneNumberID, wamid, waID, callback, s, d)
	}
	for _, s := range sts {
		d.Statuses = append(d.Statuses, s.status)
	}
	// An answer comes after the message reached the person, and (in the
	// sandbox) after its send was answered.
	if d.Final != "failed" && d.Code == 0 && !isEarly {
		if b := h.answer(d, phoneNumberID, wamid, waID, now); b != nil {
			bodies = append(bodies, b)
		}
	}
	bodies = append(bodies, after...) // account events, after the statuses that name the number
	d.Posted = len(bodies)
	h.mu.Lock()
	h.deliveries[wamid] = d
	h.mu.Unlock()
	if isEarly {
		return d.Final, bodies
	}
	h.wg.Add(1)
	go h.post(bodies, hold.For)
	return d.Final, nil
}

// postEarly posts a message's statuses at once, before its send is
// answered; the handler waits for them.
func (h *webhooker) postEarly(bodies [][]byte) {
	for _, b := range bodies {
		if !h.postOne(b) {
			h.mu.Lock()
			h.failures++
			h.mu.Unlock()
		}
	}
}

// post sends one message's bodies in order after the delay, each retried
// (as Meta does) until answered 200 or given up.
func (h *webhooker) post(bodies [][]byte, held time.Duration) {
	defer h.wg.Done()
	if d := h.o.Delay + held; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-h.hurry:
			t.Stop()
		}
	}
	h.sem <- struct{}{}
	defer func() { <-h.sem }()
	for _, b := range bodies {
		if !h.postOne(b) {
			h.mu.Lock()
			h.failures++
			h.mu.Unlock()
		}
	}
}

func (h *webhooker) postOne(body []byte) bool {
	mac := hmac.New(sha256.New, h.o.AppSecret)
	mac.Write(body)
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, h.o.URL, bytes.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Hub-Signature-256", sig)
		resp, err := h.client.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return true
		}
	}
	return false
}

// statusBody is a messages webhook with one status, in Meta's shape.
func statusBody(phoneNumberID, wamid, waID, callback string, s plannedStatus, d *Delivery) []byte {
	st := map[string]any{
		"id": wamid, "status": s.status, "timestamp": strconv.FormatInt(s.at.Unix(), 10),
	}
	recipientFields(st, waID)
	if callback != "" {
		st["biz_opaque_callback_data"] = callback
	}
	switch s.status {
	case "failed":
		st["errors"] = []any{map[string]any{
			"code": s.code, "title": title(s.code), "message": title(s.code),
			"error_data": map[string]any{"details": "In order to maintain a healthy ecosystem engagement, the message failed to be delivered."},
			"href":       "/docs/whatsapp/cloud-api/support/error-codes/",
		}}
	case "sent", "delivered":
		st["pricing"] = map[string]any{"billable": d.PricingType == "regular", "pricing_model": "PMP", "type": d.PricingType, "category": d.Category}
	}
	return messagesBody(phoneNumberID, map[string]any{"statuses": []any{st}})
}

// upgradeBody is the phone_number_quality_update THROUGHPUT_UPGRADE that
// ends a number's upgrade window (Faults.Upgrade), in Meta's shape: it
// names the display number only.
func upgradeBody(phoneNumberID string) []byte {
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "sandbox-waba", "changes": []any{map[string]any{
			"field": "phone_number_quality_update",
			"value": map[string]any{"display_phone_number": "1555" + phoneNumberID, "event": "THROUGHPUT_UPGRADE",
				"max_daily_conversations_per_business": "TIER_UNLIMITED"},
		}}}},
	})
	return b
}

// messagesBody is a messages-field notification from the number
// phoneNumberID, its value's metadata added to value.
func messagesBody(phoneNumberID string, value map[string]any) []byte {
	value["messaging_product"] = "whatsapp"
	value["metadata"] = map[string]any{"display_phone_number": "1555" + phoneNumberID, "phone_number_id": phoneNumberID}
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "sandbox-waba", "changes": []any{map[string]any{
			"field": "messages", "value": value,
		}}}},
	})
	return b
}

// replies are the sandbox's answers, by draw.
var replies = []string{"Yes, interested!", "How much is it?", "Thanks 👍", "Can you call me tomorrow?", "Is this still on?"}

// answer draws what the recipient of a delivered message sends back and
// returns its body (nil: nothing), posted after the message's statuses.
func (h *webhooker) answer(d *Delivery, phoneNumberID, wamid, waID string, now time.Time) []byte {
	p := h.answers.Float64()
	o := h.o
	var msg map[string]any
	switch {
	case p < o.StopButton:
		d.Answer = "stop-button"
		msg = map[string]any{"type": "button", "button": map[string]any{"payload": "Stop promotions", "text": "Stop promotions"},
			"context": map[string]any{"from": "1555" + phoneNumberID, "id": wamid}}
	case p < o.StopButton+o.Stop:
		d.Answer = "stop"
		msg = map[string]any{"type": "text", "text": map[string]any{"body": "STOP"}}
	case p < o.StopButton+o.Stop+o.Reply:
		d.Answer = "reply"
		msg = map[string]any{"type": "text", "text": map[string]any{"body": replies[h.answers.Intn(len(replies))]}}
		if h.answers.Intn(2) == 0 {
			msg["context"] = map[string]any{"from": "1555" + phoneNumberID, "id": wamid}
		}
	default:
		return nil
	}
	d.AnswerID = "wamid.in." + strings.TrimPrefix(wamid, "wamid.")
	h.windows.note(waID, phoneNumberID, now.Add(answerAfter))
	msg["id"], msg["timestamp"] = d.AnswerID, strconv.FormatInt(now.Add(answerAfter).Unix(), 10)
	return messagesBody(phoneNumberID, map[string]any{
		"contacts": []any{sender(msg, waID)},
		"messages": []any{msg},
	})
}

// FlushWebhooks posts every planned status now, without the delay, and
// waits until all are answered or given up. It returns how many posts got
// no 200.
func (s *Server) FlushWebhooks() int {
	h := s.hooks
	if h == nil {
		return 0
	}
	h.mu.Lock()
	if !h.hurried {
		h.hurried = true
		close(h.hurry)
	}
	h.mu.Unlock()
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failures
}

// Deliveries returns the sandbox's record of the statuses it reported,
// by wamid.
func (s *Server) Deliveries() map[string]Delivery {
	out := map[string]Delivery{}
	if s.hooks == nil {
		return out
	}
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	for k, d := range s.hooks.deliveries {
		out[k] = *d
	}
	return out
}
