package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// shutdownGrace is how long in-flight answers get once serving stops.
const shutdownGrace = 5 * time.Second

// ListenAndServe serves a new Server for opts on addr until ctx is done.
// ready, if not nil, is called with the bound address once the port is
// open, so that callers can announce it (addr may end in ":0").
func ListenAndServe(ctx context.Context, addr string, opts Options, ready func(addr string)) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	s := New(opts)
	if err := Serve(ctx, ln, s); err != nil {
		return err
	}
	if n := s.FlushWebhooks(); n > 0 {
		return fmt.Errorf("sandbox: %d status webhooks were not answered 200", n)
	}
	if err := s.RecordErr(); err != nil {
		return fmt.Errorf("sandbox: writing records: %w", err)
	}
	return nil
}

// Serve serves h on ln until ctx is done, then shuts down gracefully. Slow
// answers still waiting are cut off rather than awaited.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("sandbox: %w", err)
	case <-ctx.Done():
	}
	cancelBase() // ends slow answers, whose handlers wait on the request context
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("sandbox: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// ParseLatency parses a --latency value: a duration "200ms", or one with a
// uniform jitter "200ms±50ms" (ASCII: "200ms+-50ms"), within which each
// answer's delay is drawn.
func ParseLatency(s string) (Latency, error) {
	bad := func(why string) (Latency, error) {
		return Latency{}, fmt.Errorf("latency %q: %s; want D or D±J, e.g. 200ms or 200ms±50ms", s, why)
	}
	base, jitter, ok := strings.Cut(s, "±")
	if !ok {
		base, jitter, ok = strings.Cut(s, "+-")
	}
	var l Latency
	var err error
	if l.Base, err = time.ParseDuration(strings.TrimSpace(base)); err != nil {
		return bad(fmt.Sprintf("%q is not a duration", base))
	}
	if ok {
		if l.Jitter, err = time.ParseDuration(strings.TrimSpace(jitter)); err != nil {
			return bad(fmt.Sprintf("%q is not a duration", jitter))
		}
	}
	if l.Base < 0 || l.Jitter < 0 {
		return bad("durations must not be negative")
	}
	if l.Jitter > l.Base {
		return bad("the jitter must not exceed the delay")
	}
	return l, nil
}

// ParseFailNumber parses a --fail-number value "E164=CODE".
func ParseFailNumber(s string) (number string, code int, err error) {
	number, codeStr, ok := strings.Cut(s, "=")
	if !ok || waID(number) == "" {
		return "", 0, fmt.Errorf("fail number %q: want E164=CODE, e.g. +16505551234=131026", s)
	}
	code, err = parseCode(codeStr)
	if err != nil {
		return "", 0, fmt.Errorf("fail number %q: %w", s, err)
	}
	return strings.TrimSpace(number), code, nil
}

// ParseFatalAccount parses a --fatal-account value "PNID=CODE[@AFTER]".
func ParseFatalAccount(s string) (phoneNumberID string, fa FatalAccount, err error) {
	phoneNumberID, rest, ok := strings.Cut(s, "=")
	phoneNumberID = strings.TrimSpace(phoneNumberID)
	if !ok || phoneNumberID == "" {
		return "", FatalAccount{}, fmt.Errorf("fatal account %q: want PNID=CODE[@AFTER], e.g. 106540352242922=190@100", s)
	}
	codeStr, afterStr, hasAfter := strings.Cut(rest, "@")
	if fa.Code, err = parseCode(codeStr); err != nil {
		return "", FatalAccount{}, fmt.Errorf("fatal account %q: %w", s, err)
	}
	if hasAfter {
		fa.After, err = strconv.Atoi(strings.TrimSpace(afterStr))
		if err != nil || fa.After < 0 {
			return "", FatalAccount{}, fmt.Errorf("fatal account %q: after %q must be a count of messages", s, afterStr)
		}
	}
	return phoneNumberID, fa, nil
}

// ParseCodeProb parses a --code value "CODE=P".
func ParseCodeProb(s string) (code int, p float64, err error) {
	codeStr, pStr, ok := strings.Cut(s, "=")
	if !ok {
		return 0, 0, fmt.Errorf("code probability %q: want CODE=P, e.g. 131026=0.05", s)
	}
	if code, err = parseCode(codeStr); err != nil {
		return 0, 0, fmt.Errorf("code probability %q: %w", s, err)
	}
	p, err = strconv.ParseFloat(strings.TrimSpace(pStr), 64)
	if err != nil || !(p >= 0 && p <= 1) {
		return 0, 0, fmt.Errorf("code probability %q: %q is not a probability between 0 and 1", s, pStr)
	}
	return code, p, nil
}

func parseCode(s string) (int, error) {
	code, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || code < 0 {
		return 0, fmt.Errorf("%q is not a Graph error code", s)
	}
	return code, nil
}
