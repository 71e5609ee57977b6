// Command ceiling measures the raw loopback ceiling of a Cloud API
// stand-in: a minimal client posting template messages with N workers for
// a fixed time, no database, no limits. bench/throughput.sh compares
// wasend's own sending rate to it.
//
// The requests are the ones wasend sends for bench/throughput.sh's list
// (whatsapp.BuildBody of the same template, one body parameter and the
// callback data; the same headers), built before the clock starts: the
// server does the same work for both, so the ratio compares the clients.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasend/wasend/internal/whatsapp"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8089/v25.0/100000000000001/messages", "messages endpoint")
	workers := flag.Int("workers", 8, "concurrent clients")
	dur := flag.Duration("duration", 10*time.Second, "how long to send")
	flag.Parse()

	const distinct = 10000
	bodies := make([][]byte, distinct)
	for i := range bodies {
		b, err := whatsapp.BuildBody(whatsapp.Request{To: fmt.Sprintf("+49151%08d", 10000000+i),
			Template:     &whatsapp.Template{Name: "wasend_demo", Lang: "en_US", BodyParams: []string{fmt.Sprint("P", i)}},
			CallbackData: fmt.Sprintf("wasend:c1:m%d", i+1)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(2)
		}
		bodies[i] = b
	}

	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	client := &http.Client{Transport: tr}
	var ok, failed atomic.Int64
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(bodies[(w*distinct/max(*workers, 1)+i)%distinct]))
				req.Header.Set("Authorization", "Bearer ceiling")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	rate := float64(ok.Load()) / dur.Seconds()
	fmt.Printf("ceiling: %d accepted, %d failed in %v with %d workers: %.0f req/s\n", ok.Load(), failed.Load(), *dur, *workers, rate)
	if ok.Load() == 0 {
		os.Exit(1)
	}
}
