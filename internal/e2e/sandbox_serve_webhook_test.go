package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
	"github.com/wasend/wasend/internal/whatsapp"
)

// TestSandboxServeWebhook: `wasend sandbox serve --webhook URL`, run as a
// process with WASEND_APP_SECRET set, starts and posts the status webhooks
// of an accepted message to URL, signed with that secret as Meta signs;
// without the secret it refuses to start, naming the variable.
func TestSandboxServeWebhook(t *testing.T) {
	w := testproc.New(t, testproc.Options{})
	if r := w.Run("sandbox", "serve", "--addr", "127.0.0.1:0", "--webhook", "http://127.0.0.1:1/"); r.Code == 0 ||
		!strings.Contains(r.Stderr, "WASEND_APP_SECRET is not set") {
		t.Errorf("sandbox serve --webhook without WASEND_APP_SECRET: want a refusal naming it\n%s", r)
	}

	const secret = "e2e-app-secret-5f1c"
	type post struct {
		body      string
		signature string
	}
	posts := make(chan post, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posts <- post{string(body), r.Header.Get("X-Hub-Signature-256")}
	}))
	t.Cleanup(hook.Close)

	box := testproc.StartSandboxEnv(t, t.TempDir(), []string{"WASEND_APP_SECRET=" + secret},
		"--webhook", hook.URL, "--webhook-delay", "0s")
	client := whatsapp.New(whatsapp.Config{BaseURL: box.URL, Timeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	res, err := client.Send(t.Context(), whatsapp.Request{PhoneNumberID: "100000000000001", Token: "any-token",
		To: "+4915112345678", Text: "hi", CallbackData: "wasend:c1:m1"})
	if err != nil {
		t.Fatalf("send to the sandbox: %v", err)
	}
	select {
	case p := <-posts:
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(p.body))
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); p.signature != want {
			t.Errorf("X-Hub-Signature-256 = %q, want %q (HMAC-SHA256 of the body with the app secret)", p.signature, want)
		}
		if !strings.Contains(p.body, res.WAMID) {
			t.Errorf("webhook body does not name the message %s:\n%s", res.WAMID, p.body)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no webhook posted within 15s of an accepted message")
	}
}
