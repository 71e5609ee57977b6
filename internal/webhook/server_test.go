package webhook

import (
	"net"
	"testing"
)

// A connection a client dialled and never used (a transport parks such
// connections) does not hold up stopping: stop returns without error.
func TestStopClosesUnusedConnections(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	srv := &Server{Receiver: NewReceiver(ReceiverConfig{Inbox: f.st, AppSecret: []byte("s")}), Applier: f.ap}
	addr, stop, err := srv.Start(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := stop(); err != nil {
		t.Fatalf("stop with an unused connection open: %v", err)
	}
}
