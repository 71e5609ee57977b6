package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SignatureHeader carries the HMAC-SHA256 of the raw body, keyed with the
// app secret: "sha256=<lowercase hex>".
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value for body.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// validSignature checks header against the raw body in constant time.
// Meta signs the bytes it sends (with escaped Unicode), so the body must
// never be re-serialised before this check.
func validSignature(secret, body []byte, header string) bool {
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}
