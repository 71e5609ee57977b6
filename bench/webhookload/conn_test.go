package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/webhook"
)

// The raw requests are what a net/http server reads as Meta's POST (its
// headers and body), and the answers net/http writes — empty, with a body,
// closing — read back whole, connection after connection.
func TestPostOverRealHTTP(t *testing.T) {
	secret := []byte("s")
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, fmt.Sprintf("%s %s %s %t %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"),
			r.Header.Get(webhook.SignatureHeader) == webhook.Sign(secret, b), b))
		switch string(b) {
		case "error":
			http.Error(w, "no", http.StatusInternalServerError)
		case "close":
			w.Header().Set("Connection", "close")
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := dial(host)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		want int
	}{{"ok", 200}, {"error", 500}, {"ok", 200}, {"close", 200}, {"ok", 200}} {
		b := []byte(tc.body)
		status, err := c.post(request(host, "/webhook", b, webhook.Sign(secret, b), sign1(secret, b)))
		if err != nil || status != tc.want {
			t.Fatalf("post %q: status %d, %v; want %d", tc.body, status, err, tc.want)
		}
	}
	if want := "POST /webhook application/json true ok"; got[0] != want || len(got) != 5 {
		t.Fatalf("the server read %q; want 5 posts, the first %q", got, want)
	}
}

func TestReadAnswer(t *testing.T) {
	for _, tc := range []struct {
		in, rest string
		status   int
		closed   bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nnext", "next", 200, false},
		{"HTTP/1.1 401 Unauthorized\r\ncontent-length: 3\r\nconnection: Close\r\n\r\nno\nnext", "next", 401, true},
		{"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end", "", 200, true},
	} {
		r := bufio.NewReader(strings.NewReader(tc.in))
		status, closed, err := readAnswer(r)
		rest, _ := io.ReadAll(r)
		if err != nil || status != tc.status || closed != tc.closed || string(rest) != tc.rest {
			t.Errorf("readAnswer(%q) = %d, %t, %v, then %q; want %d, %t, then %q", tc.in, status, closed, err, rest, tc.status, tc.closed, tc.rest)
		}
	}
}

func TestReadAnswerRefusesWhatItCannotRead(t *testing.T) {
	for _, in := range []string{
		"SSH-2.0\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
	} {
		if _, _, err := readAnswer(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("readAnswer(%q): no error", in)
		}
	}
}

// A post allocates nothing (the server here answers from fixed buffers:
// AllocsPerRun counts every goroutine's allocations).
func TestPostAllocatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	host := ln.Addr().String()
	req := request(host, "/webhook", []byte("{}"), "sha256=x", "sha1=x")
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		in, answer := make([]byte, len(req)), []byte("HTTP/1.1 200 OK\r\nDate: now\r\nContent-Length: 2\r\n\r\nok")
		for {
			if _, err := io.ReadFull(nc, in); err != nil {
				return
			}
			nc.Write(answer)
		}
	}()
	c, err := dial(host)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if status, err := c.post(req); err != nil || status != 200 {
			t.Fatalf("status %d, %v", status, err)
		}
	}); n != 0 {
		t.Fatalf("a post allocates %.1f times; want 0", n)
	}
}
