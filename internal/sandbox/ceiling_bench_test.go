package sandbox_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/whatsapp"
)

// BenchmarkLoopbackCeiling is the most a sender can get through this
// sandbox on loopback: wasend's own HTTP client, 16 workers, no database.
// Compare BenchmarkSendUnlimited in internal/dispatch.
func BenchmarkLoopbackCeiling(b *testing.B) {
	box := sandbox.New(sandbox.Options{Throughput: -1, PairInterval: -1})
	srv := httptest.NewServer(box)
	defer srv.Close()
	client := whatsapp.New(whatsapp.Config{BaseURL: srv.URL})
	var wg sync.WaitGroup
	ch := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				_, err := client.Send(context.Background(), whatsapp.Request{PhoneNumberID: "1", Token: "t", To: fmt.Sprintf("+49151%08d", 10000000+i), Template: &whatsapp.Template{Name: "wasend_demo", Lang: "en_US"}})
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
