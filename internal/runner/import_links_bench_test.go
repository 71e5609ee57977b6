package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/webhook"
)

// BenchmarkImport100kLinked is BenchmarkImport100k on a database that
// knows phone ↔ user id links (issue 27): every batch of rows then asks
// the links table for its people. Half the file's numbers are linked.
func BenchmarkImport100kLinked(b *testing.B) {
	const n = 100_000
	var csv bytes.Buffer
	csv.WriteString("phone,name,code,city\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "+49151%08d,Person %d,C%06d,Berlin\n", 10000000+i, i, i)
	}
	ctx := context.Background()
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en_US", Params: []string{"name", "code", "city"}}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), driver.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var bodies [][]byte
		for j := 0; j < n; j += 2 {
			bodies = append(bodies, []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
				"metadata":{"display_phone_number":"15550001111","phone_number_id":"1"},
				"statuses":[{"id":"wamid.x%d","status":"read","timestamp":"1","recipient_id":"49151%08d","recipient_user_id":"DE.%d"}]}}]}]}`, j, 10000000+j, j)))
		}
		if err := st.AddToInbox(ctx, bodies); err != nil {
			b.Fatal(err)
		}
		for {
			rep, err := webhook.Drain(ctx, st, 5000, webhook.NewRules(webhook.Policy{}))
			if err != nil {
				b.Fatal(err)
			}
			if rep.Bodies == 0 {
				break
			}
		}
		if k, err := readmodel.New(st).CountLinks(ctx); err != nil || k != n/2 {
			b.Fatalf("%d links, %v", k, err)
		}
		b.StartTimer()
		c, _, err := runner.Import(ctx, st, bytes.NewReader(csv.Bytes()), "bench.csv",
			campaign.Campaign{Name: "bench", Fingerprint: "bench", Source: "bench.csv", Spec: spec}, "")
		if err != nil || c.Imported != n {
			b.Fatalf("imported %d, %v", c.Imported, err)
		}
		b.StopTimer()
		st.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
