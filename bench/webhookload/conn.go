package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// request is one POST as Meta makes it, its head and body in one buffer,
// built and signed before the clock starts: posting it is one write.
func request(host, path string, body []byte, sig256, sig1 string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: facebookexternalua\r\nAccept: */*\r\n"+
		"Content-Type: application/json\r\nX-Hub-Signature: %s\r\nX-Hub-Signature-256: %s\r\nContent-Length: %d\r\n\r\n",
		path, host, sig1, sig256, len(body))
	b.Write(body)
	return b.Bytes()
}

// conn is one kept-alive HTTP/1.1 connection that posts a request and
// reads its answer with no allocation: a raw request written whole, and an
// answer's status line and Content-Length read from a buffer it keeps.
// Meta's side does not pipeline: one request at a time on a connection.
type conn struct {
	addr string
	nc   net.Conn
	r    *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c := &conn{addr: addr}
	return c, c.redial()
}

func (c *conn) redial() error {
	if c.nc != nil {
		c.nc.Close()
	}
	nc, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
	if err != nil {
		return err
	}
	c.nc = nc
	if c.r == nil {
		c.r = bufio.NewReaderSize(nc, 4<<10)
	} else {
		c.r.Reset(nc)
	}
	return nil
}

// post writes req and returns the answer's status code, having read the
// answer whole. On an error the connection is dialled anew for the next
// post; an answer that closes the connection does the same.
func (c *conn) post(req []byte) (status int, err error) {
	if _, err = c.nc.Write(req); err == nil {
		var closed bool
		status, closed, err = readAnswer(c.r)
		if err == nil && !closed {
			return status, nil
		}
	}
	if rerr := c.redial(); err == nil {
		err = rerr
	}
	return status, err
}

var errChunked = errors.New("a chunked answer (the receiver answers with a length)")

// readAnswer reads one HTTP/1.1 answer from r: its status, whether it
// closes the connection, its body discarded.
func readAnswer(r *bufio.Reader) (status int, closed bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("not an HTTP/1.x status line: %q", line)
	}
	status, ok := digits(line[9:12])
	if !ok {
		return 0, false, fmt.Errorf("status line %q: no status code", line)
	}
	length := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			n, ok := digits(value)
			if !ok {
				return status, false, fmt.Errorf("Content-Length %q: not a length", value)
			}
			length = n
		case asciiEqualFold(name, "Transfer-Encoding") && !asciiEqualFold(value, "identity"):
			return status, false, errChunked
		case asciiEqualFold(name, "Connection") && asciiEqualFold(value, "close"):
			closed = true
		}
	}
	if length < 0 { // the body runs to the connection's end
		_, err = io.Copy(io.Discard, r)
		return status, true, err
	}
	_, err = r.Discard(length)
	return status, closed, err
}

// digits reads a decimal number (strconv would allocate for its error).
func digits(b []byte) (n int, ok bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
