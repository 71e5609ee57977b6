// Command webhookload posts signed status notifications to a webhook
// receiver the way Meta does — one status per body, three per message
// (sent, delivered, read), each signed with X-Hub-Signature-256 — open
// loop at a fixed rate: each post is due on schedule whether or not the
// earlier ones were answered, and its answer time counts from when it was
// due, so a slow receiver (or a generator short of CPU) shows as answer
// time, not as a lower offered rate. The messages are real sent rows of
// the receiver's database, listed in -rows (one "id|wamid|phone|phone
// number id" a line, as bench/webhook.sh writes them with sqlite3), so the
// applier does the work it does for Meta's statuses.
//
// It prints the answered rate, the answer times and its own CPU per post;
// bench/webhook.sh runs it and reads the inbox's lag from the database.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wasend/wasend/internal/webhook"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/webhook", "the receiver's callback URL")
	rowsPath := flag.String("rows", "", `the sent rows to post statuses of: "id|wamid|phone|phone number id" a line`)
	campaignID := flag.Int64("campaign", 1, "the campaign of those rows (their callback data)")
	rate := flag.Float64("rate", 5000, "posts per second (open loop)")
	maxPosts := flag.Int("posts", 0, "posts to make (0: three per sent row)")
	conns := flag.Int("conns", 64, "connections posting at once (Meta's side keeps several open)")
	flag.Parse()
	secret := []byte(os.Getenv("WASEND_APP_SECRET"))
	if len(secret) == 0 || *rowsPath == "" {
		fail(fmt.Errorf("set WASEND_APP_SECRET and -rows"))
	}
	bodies, sigs, err := build(*rowsPath, *campaignID, secret, *maxPosts)
	if err != nil {
		fail(err)
	}

	n := len(bodies)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	lat := make([]time.Duration, n)
	var (
		failed, late atomic.Int64
		next         atomic.Int64
		posters      sync.WaitGroup
	)
	cpu0 := cpuTime()
	start := time.Now()
	interval := time.Duration(float64(time.Second) / *rate)
	// Each poster takes the next post, waits until it is due and sends it.
	for range *conns {
		posters.Add(1)
		go func() {
			defer posters.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				due := start.Add(time.Duration(i) * interval)
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				} else if d < -10*time.Millisecond {
					late.Add(1) // every poster was busy: the receiver (or this generator) is behind
				}
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(bodies[i]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(webhook.SignatureHeader, sigs[i])
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				lat[i] = time.Since(due)
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}()
	}
	posters.Wait()
	answered := time.Since(start)
	cpu := cpuTime() - cpu0

	slices.Sort(lat)
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	fmt.Printf("posted %d signed status bodies, %.0f/s offered, %.0f/s answered (the last answer %.1f s after the first post); %d not answered 200; %d sent >10 ms after due\n",
		n, *rate, float64(n)/answered.Seconds(), answered.Seconds(), failed.Load(), late.Load())
	fmt.Printf("answer time from when each post was due: p50 %s ms, p99 %s ms, max %s ms\n", ms(lat[n/2]), ms(lat[n*99/100]), ms(lat[n-1]))
	fmt.Printf("load generator CPU: %.0f µs per post\n", float64(cpu.Microseconds())/float64(n))

}

// build makes the signed bodies: sent, delivered and read of each row
// listed in path, message by message, up to max (0: all).
func build(path string, campaignID int64, secret []byte, max int) (bodies [][]byte, sigs []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	now := time.Now()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan() && (max == 0 || len(bodies) < max); line++ {
		fs := strings.Split(sc.Text(), "|")
		if len(fs) != 4 {
			return nil, nil, fmt.Errorf("%s:%d: want id|wamid|phone|phone number id, got %q", path, line, sc.Text())
		}
		mid, wamid, phone, pid := fs[0], fs[1], fs[2], fs[3]
		for k, st := range []string{"sent", "delivered", "read"} {
			if max > 0 && len(bodies) == max {
				break
			}
			b := statusBody(pid, wamid, phone, fmt.Sprintf("wasend:c%d:m%s", campaignID, mid), st, now.Add(time.Duration(k)*time.Second))
			bodies, sigs = append(bodies, b), append(sigs, webhook.Sign(secret, b))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(bodies) == 0 {
		return nil, nil, fmt.Errorf("%s lists no rows to post statuses of", path)
	}
	return bodies, sigs, nil
}

// statusBody is one status in Meta's shape (docs/cloud-api.md#webhooks).
func statusBody(pid, wamid, phone, callback, status string, at time.Time) []byte {
	st := map[string]any{
		"id": wamid, "status": status, "timestamp": strconv.FormatInt(at.Unix(), 10),
		"recipient_id": strings.TrimPrefix(phone, "+"), "biz_opaque_callback_data": callback,
	}
	if status != "read" {
		st["conversation"] = map[string]any{"id": "conv-" + wamid, "origin": map[string]any{"type": "marketing"}}
		st["pricing"] = map[string]any{"billable": true, "pricing_model": "PMP", "type": "regular", "category": "marketing"}
	}
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{
			"field": "messages",
			"value": map[string]any{"messaging_product": "whatsapp",
				"metadata": map[string]any{"display_phone_number": "1555" + pid, "phone_number_id": pid},
				"statuses": []any{st}},
		}}}},
	})
	return b
}

// cpuTime is the user and system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "webhookload:", err)
	os.Exit(2)
}
