// Command webhookload posts signed status notifications to a webhook
// receiver the way Meta does — one status per body, three per message
// (sent, delivered, read), each signed with X-Hub-Signature-256 — open
// loop at a fixed rate: each post is due on schedule whether or not the
// earlier ones were answered, and its answer time counts from when it was
// due, so a slow receiver (or a generator short of CPU) shows as answer
// time, not as a lower offered rate. The messages are real rows of the receiver's
// database (sent rows of campaign -campaign), read before the clock
// starts, so the applier does the work it does for Meta's statuses.
//
// It prints the offered and answered rate, the answer times, its own CPU
// per post and, read from the database once every post was answered, how
// long each body waited in the inbox before it was applied (applied_at −
// received_at, both on the receiver's clock). bench/webhook.sh runs it.
package main

import (
	"bytes"
	"database/sql"
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

	_ "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/webhook"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/webhook", "the receiver's callback URL")
	dbPath := flag.String("db", "", "the receiver's database (read: the sent rows, then the inbox)")
	campaignID := flag.Int64("campaign", 1, "the campaign whose sent rows the statuses are about")
	rate := flag.Float64("rate", 5000, "posts per second (open loop)")
	maxPosts := flag.Int("posts", 0, "posts to make (0: three per sent row)")
	wait := flag.Duration("wait", 60*time.Second, "how long to wait for the inbox to be applied after the last answer")
	conns := flag.Int("conns", 64, "connections posting at once (Meta's side keeps several open)")
	flag.Parse()
	secret := []byte(os.Getenv("WASEND_APP_SECRET"))
	if len(secret) == 0 || *dbPath == "" {
		fail(fmt.Errorf("set WASEND_APP_SECRET and -db"))
	}
	db, err := sql.Open("sqlite3", "file:"+*dbPath+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		fail(err)
	}
	defer db.Close()

	bodies, sigs, err := build(db, *campaignID, secret, *maxPosts)
	if err != nil {
		fail(err)
	}
	var firstID int64
	if err := db.QueryRow(`SELECT coalesce(max(id), 0) FROM webhook_inbox`).Scan(&firstID); err != nil {
		fail(fmt.Errorf("read the inbox: %w", err))
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

	// The applier's lag: every body stored since the start, applied.
	deadline := time.Now().Add(*wait)
	for {
		var left int
		if err := db.QueryRow(`SELECT count(*) FROM webhook_inbox WHERE id > ? AND applied_at IS NULL`, firstID).Scan(&left); err != nil {
			fail(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Printf("inbox: %d bodies still not applied %v after the last answer\n", left, *wait)
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
	drained := time.Since(start)
	rows, err := db.Query(`SELECT applied_at - received_at FROM webhook_inbox WHERE id > ? ORDER BY 1`, firstID)
	if err != nil {
		fail(err)
	}
	var lags []time.Duration
	for rows.Next() {
		var ns int64
		if err := rows.Scan(&ns); err != nil {
			fail(err)
		}
		lags = append(lags, time.Duration(ns))
	}
	if err := rows.Err(); err != nil || len(lags) == 0 {
		fail(fmt.Errorf("read the inbox's lag (%d bodies): %v", len(lags), err))
	}
	k := len(lags)
	fmt.Printf("inbox lag (stored → applied) of %d bodies: p50 %s ms, p99 %s ms, max %s ms; all applied %.1f s after the first post (%.1f s after the last answer)\n",
		k, ms(lags[k/2]), ms(lags[k*99/100]), ms(lags[k-1]), drained.Seconds(), (drained - answered).Seconds())
	var delivered, read int
	if err := db.QueryRow(`SELECT count(delivered_at), count(read_at) FROM messages WHERE campaign_id = ?`, *campaignID).Scan(&delivered, &read); err != nil {
		fail(err)
	}
	fmt.Printf("campaign %d: %d rows delivered, %d read\n", *campaignID, delivered, read)
}

// build makes the signed bodies: sent, delivered and read of each sent row
// of campaign id, message by message, up to max (0: all).
func build(db *sql.DB, id int64, secret []byte, max int) (bodies [][]byte, sigs []string, err error) {
	rows, err := db.Query(`SELECT m.id, m.wamid, m.phone, a.phone_number_id FROM messages m JOIN accounts a ON a.id = m.account_id
		WHERE m.campaign_id = ? AND m.state = 'sent' AND m.wamid IS NOT NULL ORDER BY m.id`, id)
	if err != nil {
		return nil, nil, fmt.Errorf("read the sent rows: %w", err)
	}
	defer rows.Close()
	now := time.Now()
	for rows.Next() && (max == 0 || len(bodies) < max) {
		var (
			mid               int64
			wamid, phone, pid string
		)
		if err := rows.Scan(&mid, &wamid, &phone, &pid); err != nil {
			return nil, nil, err
		}
		for k, st := range []string{"sent", "delivered", "read"} {
			if max > 0 && len(bodies) == max {
				break
			}
			b := statusBody(pid, wamid, phone, fmt.Sprintf("wasend:c%d:m%d", id, mid), st, now.Add(time.Duration(k)*time.Second))
			bodies, sigs = append(bodies, b), append(sigs, webhook.Sign(secret, b))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(bodies) == 0 {
		return nil, nil, fmt.Errorf("campaign %d has no sent rows to post statuses of", id)
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
