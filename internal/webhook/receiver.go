package webhook

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/slowtrace"
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
	// Linger is how long a commit's first body may wait for more when it
	// came during the last commit or within Linger of its end (default
	// 1 ms; negative: never): at thousands of posts a second a commit then
	// carries tens rather than a few, for a millisecond more per answer. A
	// post after a quiet Linger never waits.
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
	verifier *verifier
	mu       sync.Mutex
	open     *group        // the bodies the next commit takes; guarded by mu
	kick     chan struct{} // something is in open
	full     chan struct{} // open holds MaxBatch bodies
}

// group is the bodies that share one commit. Its handlers answer once
// done is closed, with err.
type group struct {
	bodies [][]byte
	bufs   []*[]byte     // pooled buffers of bodies, given back after the commit
	first  time.Time     // when the first body joined
	taken  chan struct{} // closed when the committer takes the group
	done   chan struct{} // closed when the commit ended
	err    error
}

func newGroup(size int) *group {
	return &group{bodies: make([][]byte, 0, size), taken: make(chan struct{}), done: make(chan struct{})}
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
	return &Receiver{cfg: cfg, verifier: newVerifier(cfg.AppSecret), open: newGroup(cfg.MaxBatch),
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1)}
}

// Run commits received bodies to the inbox until ctx ends. A commit takes
// every body that came while the previous one ran. A body after a quiet
// spell is committed at once, with no wait for company; one that came
// during the last commit or soon after it (posts are coming fast) waits
// for more, at most Linger from its arrival, unless its group fills first.
func (r *Receiver) Run(ctx context.Context) {
	var ended time.Time // when the last commit ended
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		r.mu.Lock()
		waiting, first := len(r.open.bodies), r.open.first
		r.mu.Unlock()
		if waiting == 0 { // a kick of bodies the last commit took
			continue
		}
		sp := slowtrace.Start() // a slow group: what its first body waited for
		if r.cfg.Linger > 0 && !ended.IsZero() && first.Sub(ended) < r.cfg.Linger {
			if wait := first.Add(r.cfg.Linger).Sub(r.cfg.Clock.Now()); wait > 0 {
				select {
				case <-r.cfg.Clock.After(wait):
				case <-r.full:
				case <-ctx.Done():
				}
			}
		}
		r.mu.Lock()
		g := r.open
		r.open = newGroup(r.cfg.MaxBatch)
		r.mu.Unlock()
		select { // a group filled before: not this one
		case <-r.full:
		default:
		}
		close(g.taken)
		lingered := sp.Since()
		// A body being stored must reach the disk even as the server stops.
		g.err = r.cfg.Inbox.AddToInbox(context.WithoutCancel(ctx), g.bodies)
		ended = r.cfg.Clock.Now()
		close(g.done)
		sp.End("webhook group", "bodies", len(g.bodies), "before", time.Since(first)-sp.Since(), "linger", lingered, "store", sp.Since()-lingered)
		for _, b := range g.bufs {
			bodies.Put(b)
		}
		if g.err == nil && r.cfg.Stored != nil {
			r.cfg.Stored()
		}
	}
}

// store adds body to the next commit and waits for it: false when ctx
// ended before the body joined one. buf, when not nil, is body's pooled
// buffer, which the committer gives back.
func (r *Receiver) store(ctx context.Context, body []byte, buf *[]byte) (joined bool, err error) {
	for {
		r.mu.Lock()
		g := r.open
		if len(g.bodies) < r.cfg.MaxBatch {
			if len(g.bodies) == 0 {
				g.first = r.cfg.Clock.Now()
			}
			g.bodies = append(g.bodies, body)
			if buf != nil {
				g.bufs = append(g.bufs, buf)
			}
			full := len(g.bodies) == r.cfg.MaxBatch
			r.mu.Unlock()
			select {
			case r.kick <- struct{}{}:
			default:
			}
			if full {
				select {
				case r.full <- struct{}{}:
				default:
				}
			}
			<-g.done
			return true, g.err
		}
		r.mu.Unlock()
		// Full: the next group opens when the committer takes this one.
		select {
		case <-g.taken:
		case <-ctx.Done():
			return false, ctx.Err()
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

// notify checks a notification's signature and size, stores it and
// answers. Reading what it says is the applier's: a signed body that does
// not parse is kept and skipped there, with its reason.
func (r *Receiver) notify(w http.ResponseWriter, req *http.Request) {
	body, buf, err := readBody(w, req)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		r.reject(w, http.StatusBadRequest, "too_large")
		return
	case err != nil:
		bodies.Put(buf)
		r.reject(w, http.StatusBadRequest, "unreadable")
		return
	}
	sig := req.Header.Get(SignatureHeader)
	if sig == "" || !r.verifier.valid(body, sig) {
		bodies.Put(buf)
		if sig == "" {
			r.reject(w, http.StatusUnauthorized, "unsigned")
			return
		}
		r.cfg.Log.Warn("webhook body with a bad signature refused", "remote", req.RemoteAddr)
		r.reject(w, http.StatusUnauthorized, "bad_signature")
		return
	}
	joined, err := r.store(req.Context(), body, buf)
	if !joined {
		bodies.Put(buf)
		return
	}
	if err != nil {
		// Meta retries a non-200 for days: nothing is lost.
		r.cfg.Log.Error("webhook body not stored; Meta will retry it", "err", err)
		r.reject(w, http.StatusInternalServerError, "store")
		return
	}
	r.cfg.Metrics.received.Inc()
	w.WriteHeader(http.StatusOK)
}

// pooledBody bounds the bodies read into pooled buffers: Meta's are a few
// KiB; a rare larger one gets a buffer of its own.
const pooledBody = 64 << 10

// bodies are the buffers bodies are read into, given back once stored (or
// refused), so a post costs no allocation of its size.
var bodies = bufPool{}

type bufPool struct{ p sync.Pool }

func (b *bufPool) Get(n int) *[]byte {
	if v, ok := b.p.Get().(*[]byte); ok && cap(*v) >= n {
		*v = (*v)[:n]
		return v
	} else if ok {
		b.p.Put(v)
	}
	v := make([]byte, n, max(n, 4<<10))
	return &v
}

// Put gives buf back; nil is ignored.
func (b *bufPool) Put(buf *[]byte) {
	if buf != nil {
		b.p.Put(buf)
	}
}

// readBody reads a POST's body whole, at most MaxBody bytes: into a pooled
// buffer (buf) of its declared length when that is small (net/http reads no
// more than that), else into one of its own (buf nil).
func readBody(w http.ResponseWriter, req *http.Request) (body []byte, buf *[]byte, err error) {
	if n := req.ContentLength; n > 0 && n <= pooledBody {
		buf = bodies.Get(int(n))
		_, err := io.ReadFull(req.Body, *buf)
		return *buf, buf, err
	}
	if n := req.ContentLength; n > 0 && n <= MaxBody {
		body := make([]byte, n)
		_, err := io.ReadFull(req.Body, body)
		return body, nil, err
	}
	body, err = io.ReadAll(http.MaxBytesReader(w, req.Body, MaxBody))
	return body, nil, err
}
