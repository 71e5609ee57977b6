package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a receiver and an applier on one listener.
type Server struct {
	Receiver *Receiver
	Applier  *Applier
	// Path is where Meta posts (default /webhook).
	Path string
	// Extra handlers on the same listener, such as /metrics.
	Extra map[string]http.Handler
}

// Start listens on addr and serves until ctx ends; stop shuts it down,
// applying what was stored before it returns, and may be called more than
// once. It returns the bound address (addr may end in ":0").
func (s *Server) Start(ctx context.Context, addr string) (bound string, stop func() error, err error) {
	path := s.Path
	if path == "" {
		path = "/webhook"
	}
	if path[0] != '/' {
		return "", nil, fmt.Errorf("webhook path %q: must start with /", path)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("webhook receiver: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(path, s.Receiver)
	for p, h := range s.Extra {
		mux.Handle(p, h)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	// Connections that never sent a byte: a client's transport dials ahead
	// and parks some unused. Shutdown counts them active for 5 s; stop
	// closes them, as no request is on them to finish.
	var (
		connMu   sync.Mutex
		fresh    = map[net.Conn]bool{}
		stopping bool
	)
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		connMu.Lock()
		defer connMu.Unlock()
		switch {
		case st == http.StateNew && stopping:
			c.Close()
		case st == http.StateNew:
			fresh[c] = true
		default:
			delete(fresh, c)
		}
	}

	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.Receiver.Run(rctx) }()
	go func() { defer wg.Done(); s.Applier.Run(rctx) }()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	var (
		once    sync.Once
		stopErr error
	)
	stop = func() error {
		once.Do(func() {
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			// Handlers waiting for their body to be stored finish first;
			// only then do the committer and applier stop.
			hs.SetKeepAlivesEnabled(false)
			connMu.Lock()
			stopping = true
			for c := range fresh {
				c.Close()
			}
			connMu.Unlock()
			if err := hs.Shutdown(sctx); err != nil {
				hs.Close()
				stopErr = fmt.Errorf("webhook receiver: shutdown: %w", err)
			}
			if err := <-served; !errors.Is(err, http.ErrServerClosed) && stopErr == nil {
				stopErr = fmt.Errorf("webhook receiver: %w", err)
			}
			cancel()
			wg.Wait()
			if _, err := s.Applier.Drain(context.Background()); err != nil && stopErr == nil {
				stopErr = fmt.Errorf("apply webhooks: %w", err)
			}
		})
		return stopErr
	}
	go func() {
		<-ctx.Done()
		_ = stop()
	}()
	return ln.Addr().String(), stop, nil
}
