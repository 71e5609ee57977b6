package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/webhook"
)

// TestInboundOptOutReachesSharedList: two recipients of host A's campaign
// answer, one STOP, one with the marketing opt-out button. `webhook serve
// --limits` on host A suppresses both at once and wakes its push, so the
// list every host shares has them, with their reasons, about a second
// after the post; host B's import skips them.
func TestInboundOptOutReachesSharedList(t *testing.T) {
	const first = 4915112600000
	srv := redistest.Start(t)
	limits := "--limits=" + srv.URL()
	addr := freeAddr(t)
	hostA := newWorld(t, sandbox.Options{PairInterval: -1})
	hostB := worldAt(t, hostA.api, hostA.APIBase)
	hostA.fastTiers("50", "5")
	hostA.addAccounts(account{"main", "100000000000060", "active"})
	file := hostA.WriteCSV("a.csv", first, 4)
	hostA.OK(templateRun(file, "spring_sale")...)
	rows := hostA.Rows()
	stop, button := rows[1], rows[2]

	hostA.Extra = []string{"WASEND_APP_SECRET=" + e2eSecret, "WASEND_VERIFY_TOKEN=" + e2eVerify}
	recv := hostA.Start("webhook", "serve", "--addr", addr, limits)
	hostA.Extra = nil
	now := time.Now().Unix()
	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550000060","phone_number_id":"100000000000060"},
		"contacts":[{"profile":{"name":"A"},"wa_id":"%[1]s"},{"profile":{"name":"B"},"wa_id":"%[2]s"}],
		"messages":[{"from":"%[1]s","id":"wamid.in.stop","timestamp":"%[3]d","type":"text","text":{"body":"Stop"}},
		{"from":"%[2]s","id":"wamid.in.button","timestamp":"%[3]d","type":"button","button":{"payload":"Stop promotions","text":"Stop promotions"},
		 "context":{"from":"15550000060","id":"%[4]s"}}]}}]}]}`,
		strings.TrimPrefix(stop.Phone, "+"), strings.TrimPrefix(button.Phone, "+"), now, button.WAMID))
	hostA.WaitFor(10*time.Second, "the receiver to take the answers", func() bool {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
		req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte(e2eSecret), body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	posted := time.Now()
	var list string
	hostA.WaitFor(10*time.Second, "the opt-outs on the shared list", func() bool {
		list = hostA.OK("suppress", "list", limits).Stdout
		return strings.Contains(list, stop.Phone) && strings.Contains(list, button.Phone)
	})
	d := time.Since(posted)
	t.Logf("the inbound opt-outs were on the shared list %v after the post", d.Round(time.Millisecond))
	if d > 3*time.Second {
		t.Errorf("the opt-outs reached the shared list %v after the post, want about a second", d)
	}
	for phone, why := range map[string]string{stop.Phone: `keyword "STOP"`, button.Phone: "opt-out button"} {
		if !strings.Contains(list, phone+"\t"+why) {
			t.Errorf("shared list does not give %s as %q:\n%s", phone, why, list)
		}
	}
	recv.Signal(t, syscall.SIGTERM)
	if r := recv.Wait(t); r.Code != 0 {
		t.Fatalf("webhook serve: %s", r)
	}

	hostB.OK("campaign", "import", hostB.WriteCSV("b.csv", first, 4), "--template", "spring_sale", "--lang", "en_US", "--params", "name", limits)
	if n := len(hostB.Rows()); n != 2 {
		t.Errorf("host B imported %d rows, want 2 (%s and %s skipped as suppressed)", n, stop.Phone, button.Phone)
	}
}
