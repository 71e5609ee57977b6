package webhook

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/wasend/wasend/internal/clock"
)

// MaxBody is the largest body accepted. Meta's notifications are far
// smaller; a larger one is refused before it is read whole.
const MaxBody = 1 << 20

// Inbox stores received bodies exactly as they came. *store.Store is one.
type Inbox interface {
	AddToInbox(ctx context.Context, bodies [][]byte) error
}

// ReceiverConfig configures a Receiver. Secrets come from the environment
// and go nowhere else: not into the database, a log line or an answer.
type ReceiverConfig struct {
	Inbox       Inbox
	AppSecret   []byte // WASEND_APP_SECRET: key of X-Hub-Signature-256
	VerifyToken string // WASEND_VERIFY_TOKEN: the GET handshake's token
	Metrics     *Metrics
	Log         *slog.Logger
	// Stored, when set, is called after bodies reached the inbox: it wakes
	// the applier.
	Stored func()
	// MaxBatch bounds how many bodies share one commit (default 256).
	MaxBatch int
	// Linger is how long a commit waits for more bodies after the first
	// (default 1 ms; negative: not at all): at thousands of posts a second
	// a commit then carries several, for a millisecond more per answer.
	Linger time.Duration
	// Clock times the linger (default clock.Real).
	Clock clock.Clock
}

// Receiver is the webhook endpoint: the GET verification handshake and
// signed POST notifications. Its Run method must be running: it commits
// received bodies to the inbox in groups, so a burst of POSTs costs a few
// commits rather than one each.
type Receiver struct {
	cfg      ReceiverConfig
	queue    chan storeReq
	verifier *verifier
}

type storeReq struct {
	body []byte
	done chan error
}

// NewReceiver returns a receiver for cfg.
func NewReceiver(cfg ReceiverConfig) *Receiver {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 256
	}
	if cfg.Linger == 0 {
		cfg.Linger = time.Millisecond
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	return &Receiver{cfg: cfg, queue: make(chan storeReq, 4*cfg.MaxBatch), verifier: newVerifier(cfg.AppSecret)}
}

// Run commits queued bodies to the inbox until ctx ends.
func (r *Receiver) Run(ctx context.Context) {
	batch := make([]storeReq, 0, r.cfg.MaxBatch)
	bodies := make([][]byte, 0, r.cfg.MaxBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-r.queue:
			batch = append(batch[:0], q)
		}
		var linger <-chan time.Time
		if r.cfg.Linger > 0 {
			linger = r.cfg.Clock.After(r.cfg.Linger)
		}
	more:
		for len(batch) < r.cfg.MaxBatch {
			var q storeReq
			if linger == nil {
				select {
				case q = <-r.queue:
				default:
					break more
				}
			} else {
				select {
				case q = <-r.queue:
				case <-linger:
					break more
				case <-ctx.Done():
					break more
				}
			}
			batch = append(batch, q)
		}
		bodies = bodies[:0]
		for _, q := range batch {
			bodies = append(bodies, q.body)
		}
		// A body being stored must reach the disk even as the server stops.
		err := r.cfg.Inbox.AddToInbox(context.WithoutCancel(ctx), bodies)
		for _, q := range batch {
			q.done <- err
		}
		if err == nil && r.cfg.Stored != nil {
			r.cfg.Stored()
		}
	}
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodGet:
		r.verify(w, req)
	case http.MethodPost:
		r.notify(w, req)
	default:
		w.Header().Set("Allow", "GET, POST")
		r.reject(w, http.StatusMethodNotAllowed, "method")
	}
}

func (r *Receiver) reject(w http.ResponseWriter, status int, reason string) {
	r.cfg.Metrics.rejected.WithLabelValues(reason).Inc()
	http.Error(w, http.StatusText(status), status)
}

// verify answers Meta's subscription handshake (docs/cloud-api.md#verification-handshake).
func (r *Receiver) verify(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	token := q.Get("hub.verify_token")
	if q.Get("hub.mode") != "subscribe" || r.cfg.VerifyToken == "" ||
		subtle.ConstantTimeCompare([]byte(token), []byte(r.cfg.VerifyToken)) != 1 {
		r.cfg.Log.Warn("webhook verification refused: wrong hub.mode or hub.verify_token", "remote", req.RemoteAddr)
		r.reject(w, http.StatusForbidden, "verify_token")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, q.Get("hub.challenge"))
}

// notify checks a notification's signature and size, stores it and answers.
func (r *Receiver) notify(w http.ResponseWriter, req *http.Request) {
	body, err := readBody(w, req)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		r.reject(w, http.StatusBadRequest, "too_large")
		return
	case err != nil:
		r.reject(w, http.StatusBadRequest, "unreadable")
		return
	}
	sig := req.Header.Get(SignatureHeader)
	if sig == "" {
		r.reject(w, http.StatusUnauthorized, "unsigned")
		return
	}
	if !r.verifier.valid(body, sig) {
		r.cfg.Log.Warn("webhook body with a bad signature refused", "remote", req.RemoteAddr)
		r.reject(w, http.StatusUnauthorized, "bad_signature")
		return
	}
	if !json.Valid(body) {
		r.reject(w, http.StatusBadRequest, "not_json")
		return
	}
	done := make(chan error, 1)
	select {
	case r.queue <- storeReq{body: body, done: done}:
	case <-req.Context().Done():
		return
	}
	if err := <-done; err != nil {
		// Meta retries a non-200 for days: nothing is lost.
		r.cfg.Log.Error("webhook body not stored; Meta will retry it", "err", err)
		r.reject(w, http.StatusInternalServerError, "store")
		return
	}
	r.cfg.Metrics.received.Inc()
	w.WriteHeader(http.StatusOK)
}

// readBody reads a POST's body whole, at most MaxBody bytes: one buffer
// of the declared length (net/http reads no more than that), else grown.
func readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	if n := req.ContentLength; n > 0 && n <= MaxBody {
		body := make([]byte, n)
		_, err := io.ReadFull(req.Body, body)
		return body, err
	}
	return io.ReadAll(http.MaxBytesReader(w, req.Body, MaxBody))
}
