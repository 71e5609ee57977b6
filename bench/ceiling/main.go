// Command ceiling measures the raw loopback ceiling of a Cloud API
// stand-in: a minimal client posting template messages with N workers for
// a fixed time, no database, no limits. bench/throughput.sh compares
// wasend's own sending rate to it.
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
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8089/v25.0/100000000000001/messages", "messages endpoint")
	workers := flag.Int("workers", 8, "concurrent clients")
	dur := flag.Duration("duration", 10*time.Second, "how long to send")
	flag.Parse()

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
				body := fmt.Sprintf(`{"messaging_product":"whatsapp","recipient_type":"individual","to":"+49151%04d%04d",`+
					`"type":"template","template":{"name":"wasend_demo","language":{"code":"en_US","policy":"deterministic"}}}`, w, i%10000)
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewBufferString(body))
				req.Header.Set("Authorization", "Bearer ceiling")
				req.Header.Set("Content-Type", "application/json")
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
