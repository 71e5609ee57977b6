package dispatch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/whatsapp"
)

// TestTemplateShapesThroughSandbox imports a campaign with named body
// parameters, a media header and URL buttons, sends it to the sandbox over
// HTTP and checks that every request was accepted and carried the row's
// values in the shape of docs/cloud-api.md#template-message.
func TestTemplateShapesThroughSandbox(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, start, sandbox.Faults{})
	// The same sandbox behind a handler that keeps each request body.
	var (
		mu     sync.Mutex
		bodies []string
	)
	box := sandbox.New(sandbox.Options{Now: e.clock.Now})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		box.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.box, e.client = box, whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})
	e.addAccount("a", "1001", campaign.TierActive)

	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "order_update", Lang: "en_US",
		Params: []string{"customer_name", "order_id"}, NamedParams: true,
		Header:  &campaign.Header{Type: campaign.HeaderImage, Column: "banner"},
		Buttons: []campaign.Button{{Index: 0, Column: "path"}},
	}
	csv := "phone,customer_name,order_id,banner,path\n" +
		"+4915110000001,Ana,1001,https://example.com/a.jpg,order/1001\n" +
		"+4915110000002,Ben,1002,4490709327384033,order/1002\n"
	c, skipped, err := runner.Import(e.ctx, e.st, strings.NewReader(csv), "orders.csv",
		campaign.Campaign{Name: "orders", Fingerprint: "orders", Source: "orders.csv", Spec: spec}, "")
	if err != nil || len(skipped) != 0 {
		t.Fatalf("Import: %v, skipped %v", err, skipped)
	}
	// The engine gets the campaign as the store returns it.
	if c, err = e.st.Campaign(e.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.engine(c, dispatch.Options{}).Run(e.ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != 2 || counts.Total() != 2 {
		t.Fatalf("counts %v, want 2 sent", counts)
	}

	type param struct {
		Type     string            `json:"type"`
		Name     string            `json:"parameter_name"`
		Text     string            `json:"text"`
		Image    map[string]string `json:"image"`
		Document map[string]string `json:"document"`
	}
	type sent struct {
		To       string `json:"to"`
		Template struct {
			Components []struct {
				Type       string  `json:"type"`
				SubType    string  `json:"sub_type"`
				Index      *string `json:"index"` // a string, not a number
				Parameters []param `json:"parameters"`
			} `json:"components"`
		} `json:"template"`
	}
	byTo := map[string]sent{}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bodies {
		var s sent
		if err := json.Unmarshal([]byte(b), &s); err != nil {
			t.Fatalf("request body %s: %v", b, err)
		}
		byTo[s.To] = s
	}
	for to, want := range map[string]struct{ name, media, key, path string }{
		"+4915110000001": {"Ana", "https://example.com/a.jpg", "link", "order/1001"},
		"+4915110000002": {"Ben", "4490709327384033", "id", "order/1002"},
	} {
		s, ok := byTo[to]
		comps := s.Template.Components
		if !ok || len(comps) != 3 {
			t.Errorf("%s: request %+v, want header, body and button", to, s)
			continue
		}
		if h := comps[0]; h.Type != "header" || len(h.Parameters) != 1 || h.Parameters[0].Type != "image" || h.Parameters[0].Image[want.key] != want.media {
			t.Errorf("%s: header %+v, want image %s %s", to, h, want.key, want.media)
		}
		if b := comps[1]; b.Type != "body" || len(b.Parameters) != 2 || b.Parameters[0].Name != "customer_name" || b.Parameters[0].Text != want.name ||
			b.Parameters[1].Name != "order_id" {
			t.Errorf("%s: body %+v, want named customer_name=%s, order_id", to, b, want.name)
		}
		if u := comps[2]; u.Type != "button" || u.SubType != "url" || u.Index == nil || *u.Index != "0" ||
			len(u.Parameters) != 1 || u.Parameters[0].Text != want.path {
			t.Errorf("%s: button %+v, want url button \"0\" with %s", to, u, want.path)
		}
	}
}

// TestTemplateErrorCostsOneRequest: an answer that holds for every row of
// the template (132000, the rows' parameters do not match it) pauses the
// campaign after one request, naming the code and the fix, and puts the row
// back; before, rows failed one by one until the error ratio paused.
func TestTemplateErrorCostsOneRequest(t *testing.T) {
	for _, code := range []int{132000, 132005, 132012} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{CodeProb: map[int]float64{code: 1}})
			if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1000, Burst: 500, DailyCap: 10000}); err != nil {
				t.Fatal(err)
			}
			e.addAccount("a", "1001", campaign.TierActive)
			e.addAccount("b", "1002", campaign.TierActive)
			c := e.importN(100)
			if err := e.engine(c, dispatch.Options{}).Run(e.ctx); !errors.Is(err, campaign.ErrPaused) {
				t.Fatalf("Run = %v, want ErrPaused", err)
			}
			if recs := e.box.Records(); len(recs) != 1 || recs[0].Code != code {
				t.Fatalf("%d requests, want exactly one answered %d", len(recs), code)
			}
			expectAll(t, e, campaign.Pending)
			expectPaused(t, e, c, fmt.Sprintf("error %d for template %s (en_US)", code, sandbox.DemoTemplate))
			expectPaused(t, e, c, "fix: ")
		})
	}
}
