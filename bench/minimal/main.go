// Command minimal is the lightest stand-in for the Cloud API's send
// endpoint that wasend can run against: it decodes each POSTed body and
// answers with a message id, nothing else (no limits, no faults, no
// record). bench/throughput.sh measures wasend's loopback ratio against it
// beside the sandbox's, so the server's own cost can be told from the
// client's. A GET of a phone number id answers an unlimited, green number,
// which is all wasend's preflight reads.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
)

// message is what is decoded of a send: enough to answer, and to make the
// server read the whole body as the sandbox does.
type message struct {
	MessagingProduct string          `json:"messaging_product"`
	To               string          `json:"to"`
	Type             string          `json:"type"`
	Template         json.RawMessage `json:"template"`
	BizOpaque        string          `json:"biz_opaque_callback_data"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	var seq atomic.Int64
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if r.Method == http.MethodGet && len(parts) == 2 {
			fmt.Fprintf(w, `{"id":%q,"display_phone_number":"+1 555 0100","verified_name":"bench","quality_rating":"GREEN","code_verification_status":"VERIFIED","platform_type":"CLOUD_API","throughput":{"level":"STANDARD"},"whatsapp_business_manager_messaging_limit":"TIER_UNLIMITED","name_status":"APPROVED"}`, parts[1])
			return
		}
		var m message
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || m.To == "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"(#100) Invalid parameter","type":"OAuthException","code":100,"fbtrace_id":"minimal"}}`)
			return
		}
		wa := strings.TrimPrefix(m.To, "+")
		fmt.Fprintf(w, `{"messaging_product":"whatsapp","contacts":[{"input":%q,"wa_id":%q}],"messages":[{"id":"wamid.minimal%d"}]}`, m.To, wa, seq.Add(1))
	})
	log.Printf("minimal Cloud API stand-in listening on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
