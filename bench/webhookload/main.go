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
// The generator must cost little beside the receiver it measures (both
// share the machine's cores): every request is built and signed before the
// clock starts, head and body in one buffer, and each of -conns kept-alive
// HTTP/1.1 connections has one goroutine that writes a request whole and
// reads its answer from a buffer, with no allocation a post. It prints the
// answered rate, the answer times, how many posts left more than 10 ms
// late and why, and its own CPU per post; bench/webhook.sh runs it and
// reads the inbox's lag from the database.
package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	neturl "net/url"
	"os"
	"runtime"
	"runtime/pprof"
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
	procs := flag.Int("procs", 1, "GOMAXPROCS of the generator: one is enough, and cheaper than several waking each other")
	profile := flag.String("cpuprofile", "", "write the generator's CPU profile here")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	secret := []byte(os.Getenv("WASEND_APP_SECRET"))
	if len(secret) == 0 || *rowsPath == "" {
		fail(fmt.Errorf("set WASEND_APP_SECRET and -rows"))
	}
	bodies, sigs, err := build(*rowsPath, *campaignID, secret, *maxPosts)
	if err != nil {
		fail(err)
	}

	target, err := neturl.Parse(*url)
	if err != nil || target.Scheme != "http" || target.Host == "" {
		fail(fmt.Errorf("-url %q: want http://host:port/path", *url))
	}
	n := len(bodies)
	reqs := make([][]byte, n)
	for i, b := range bodies {
		reqs[i] = request(target.Host, target.RequestURI(), b, sigs[i], sign1(secret, b))
	}
	posters := make([]*conn, *conns)
	for k := range posters {
		if posters[k], err = dial(target.Host); err != nil {
			fail(err)
		}
	}

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var (
		lat, left   = make([]time.Duration, n), make([]time.Duration, n)
		failed      atomic.Int64
		busy, woke  atomic.Int64 // posts that left >10 ms late: every connection busy; the poster woke late
		next        atomic.Int64
		wg          sync.WaitGroup
		interval    = time.Duration(float64(time.Second) / *rate)
		cpu0, start = cpuTime(), time.Now()
	)
	// Each connection's poster takes the next post, waits until it is due,
	// sends it and reads the answer. A post taken after its time waited
	// because every connection was on an earlier one (the receiver is
	// behind); one that was taken in time but left late waited on this
	// process (its timer or its CPU).
	for _, c := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				due := start.Add(time.Duration(i) * interval)
				taken := time.Since(due)
				if taken < 0 {
					time.Sleep(-taken)
				}
				sent := time.Now()
				status, err := c.post(reqs[i])
				lat[i], left[i] = time.Since(due), sent.Sub(due)
				if left[i] > lateAfter {
					if taken > lateAfter {
						busy.Add(1)
					} else {
						woke.Add(1)
					}
				}
				if err != nil || status != 200 {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	answered := time.Since(start)
	cpu := cpuTime() - cpu0

	slices.Sort(lat)
	slices.Sort(left)
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	fmt.Printf("posted %d signed status bodies over %d connections, %.0f/s offered, %.0f/s answered (the last answer %.1f s after the first post); %d not answered 200\n",
		n, *conns, *rate, float64(n)/answered.Seconds(), answered.Seconds(), failed.Load())
	fmt.Printf("answer time from when each post was due: p50 %s ms, p99 %s ms, max %s ms\n", ms(lat[n/2]), ms(lat[n*99/100]), ms(lat[n-1]))
	fmt.Printf("posts left >10 ms after due: %d every connection busy (the receiver behind), %d the generator late (left after due: p99 %s ms)\n",
		busy.Load(), woke.Load(), ms(left[n*99/100]))
	fmt.Printf("load generator CPU: %.1f µs per post\n", float64(cpu.Nanoseconds())/1e3/float64(n))
}

// lateAfter is how far after its due time a post counts as late.
const lateAfter = 10 * time.Millisecond

// sign1 is Meta's older X-Hub-Signature (HMAC-SHA1 of the body), which it
// still sends beside X-Hub-Signature-256.
func sign1(secret, body []byte) string {
	mac := hmac.New(sha1.New, secret)
	mac.Write(body)
	return "sha1=" + hex.EncodeToString(mac.Sum(nil))
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
