package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The sandbox posts signed status webhooks for every accepted message —
// dropped answers included — with duplicates, reordering and 131049
// failures, and its own record says what each message ended as.
func TestStatusWebhooks(t *testing.T) {
	secret := []byte("sandbox-test-secret")
	type got struct {
		statuses []string
		code     int
		callback string
	}
	var (
		mu       sync.Mutex
		received = map[string]*got{}
		badSig   int
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("X-Hub-Signature-256") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			badSig++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		s := firstStatus(t, body)
		g := received[s.ID]
		if g == nil {
			g = &got{}
			received[s.ID] = g
		}
		g.statuses = append(g.statuses, s.Status)
		g.callback = s.Callback
		if len(s.Errors) > 0 {
			g.code = s.Errors[0].Code
		}
	}))
	defer hook.Close()

	s, ts := startServer(t, Options{Throughput: -1, PairInterval: -1, Faults: Faults{Seed: 3, Drop: 0.1},
		Webhooks: WebhookOptions{URL: hook.URL, AppSecret: secret, Seed: 7, Read: 0.5, Duplicate: 0.2, Reorder: 0.3, Fail: 0.1}})
	const n = 300
	for i := range n {
		post(t, ts, "106540352242922", demo(fmt.Sprintf("+1650555%04d", i)))
	}
	if failed := s.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d posts not answered 200", failed)
	}
	ds := s.Deliveries()
	if len(ds) != n || badSig != 0 {
		t.Fatalf("%d deliveries recorded for %d accepted messages; %d bad signatures", len(ds), n, badSig)
	}
	rank := map[string]int{"sent": 1, "delivered": 2, "read": 3, "failed": 4}
	var dups, reordered, failed int
	for wamid, d := range ds {
		g := received[wamid]
		if g == nil || len(g.statuses) != d.Posted {
			t.Fatalf("%s: received %v, sandbox posted %d", wamid, g, d.Posted)
		}
		final, seen := "", map[string]bool{}
		for i, st := range g.statuses {
			if rank[st] > rank[final] {
				final = st
			}
			if seen[st] {
				dups++
			}
			seen[st] = true
			if i > 0 && rank[st] < rank[g.statuses[i-1]] {
				reordered++
			}
		}
		if final != d.Final || g.code != d.Code || g.callback != d.CallbackData || g.callback == "" {
			t.Errorf("%s: statuses %v (code %d, callback %q), sandbox says %+v", wamid, g.statuses, g.code, g.callback, d)
		}
		if d.Final == "failed" {
			failed++
		}
	}
	if dups == 0 || reordered == 0 || failed < n/20 || failed > n/5 {
		t.Errorf("duplicates %d, reordered %d, failed %d of %d: want some of each, failures near 10%%", dups, reordered, failed, n)
	}
}

// Early statuses reach the receiver before the send is answered, without
// callback data; opt-outs fail with 131050, late failures follow a
// delivered or read; the record lists every status posted.
func TestEarlyOptOutAndLateFailWebhooks(t *testing.T) {
	secret := []byte("sandbox-test-secret")
	var (
		mu       sync.Mutex
		received = map[string][]string{} // wamid → "status/code/callback"
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := firstStatus(t, body)
		code := 0
		if len(s.Errors) > 0 {
			code = s.Errors[0].Code
		}
		mu.Lock()
		received[s.ID] = append(received[s.ID], fmt.Sprintf("%s/%d/%s", s.Status, code, s.Callback))
		mu.Unlock()
	}))
	defer hook.Close()

	s, ts := startServer(t, Options{Throughput: -1, PairInterval: -1,
		Webhooks: WebhookOptions{URL: hook.URL, AppSecret: secret, Seed: 7, Read: 0.5, OptOut: 0.2, LateFail: 0.3, Early: 0.3,
			Delay: time.Hour}})
	const n = 200
	var early, optOuts, lateFails int
	for i := range n {
		r := post(t, ts, "106540352242922", demo(fmt.Sprintf("+1650555%04d", i)))
		wamid := r.ok.Messages[0].ID
		d := s.Deliveries()[wamid]
		mu.Lock()
		got := len(received[wamid])
		mu.Unlock()
		if d.Early != (got == len(d.Statuses)) || (!d.Early && got != 0) {
			t.Fatalf("%s: %d statuses received before the answer, sandbox says %+v", wamid, got, d)
		}
		if d.Early {
			early++
		}
	}
	if failed := s.FlushWebhooks(); failed != 0 {
		t.Fatalf("%d posts not answered 200", failed)
	}
	for wamid, d := range s.Deliveries() {
		got := received[wamid]
		if len(got) != len(d.Statuses) {
			t.Fatalf("%s: received %v, sandbox posted %v", wamid, got, d.Statuses)
		}
		for i, g := range got {
			st, code, cb := "", 0, ""
			fmt.Sscanf(strings.ReplaceAll(g, "/", " "), "%s %d %s", &st, &code, &cb)
			if st != d.Statuses[i] || (cb == "") != d.Early || (st == "failed" && code != d.Code) {
				t.Errorf("%s: status %d received %q, sandbox says %+v", wamid, i, g, d)
			}
		}
		switch {
		case d.Final == "failed" && d.Code == 131050:
			optOuts++
		case d.Final != "failed" && d.Code == 131049:
			lateFails++
			if d.Statuses[len(d.Statuses)-1] != "failed" {
				t.Errorf("%s: a late failure not last: %v", wamid, d.Statuses)
			}
		}
	}
	if early < n/5 || optOuts < n/10 || lateFails < n/10 {
		t.Errorf("early %d, opt-outs %d, late failures %d of %d: want some of each", early, optOuts, lateFails, n)
	}
}

// postedStatus is the part of a posted status webhook these tests read.
type postedStatus struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Callback string `json:"biz_opaque_callback_data"`
	Errors   []struct {
		Code int `json:"code"`
	} `json:"errors"`
}

// firstStatus decodes the one status of a body the sandbox posted.
func firstStatus(t *testing.T, body []byte) postedStatus {
	t.Helper()
	var p struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Statuses []postedStatus `json:"statuses"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(body, &p); err != nil || len(p.Entry) == 0 || len(p.Entry[0].Changes) == 0 ||
		len(p.Entry[0].Changes[0].Value.Statuses) == 0 {
		// Called from a handler's goroutine, where Fatal may not be.
		t.Errorf("body %s: no status (%v)", body, err)
		return postedStatus{}
	}
	return p.Entry[0].Changes[0].Value.Statuses[0]
}
