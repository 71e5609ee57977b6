package webhook

import (
	"strings"
	"sync"
	"testing"
)

// One verifier checks many bodies, at once too: a MAC reused after a
// refused body or another body's check starts again from the key.
func TestVerifierChecksEachBodyAlone(t *testing.T) {
	v := newVerifier(secret)
	a, b := []byte(`{"a":1}`), []byte(`{"b":"\u00e9"}`)
	tests := []struct {
		name   string
		body   []byte
		header string
		want   bool
	}{
		{"signed", a, Sign(secret, a), true},
		{"another secret", a, Sign([]byte("other"), a), false},
		{"another body's signature", b, Sign(secret, a), false},
		{"signed, after a refusal", b, Sign(secret, b), true},
		{"upper-case hex", b, "sha256=" + strings.ToUpper(strings.TrimPrefix(Sign(secret, b), "sha256=")), true},
		{"no prefix", a, strings.TrimPrefix(Sign(secret, a), "sha256="), false},
		{"sha1", a, "sha1=" + strings.TrimPrefix(Sign(secret, a), "sha256="), false},
		{"short", a, Sign(secret, a)[:len(Sign(secret, a))-2], false},
		{"long", a, Sign(secret, a) + "00", false},
		{"not hex", a, "sha256=" + strings.Repeat("zz", 32), false},
		{"empty", a, "", false},
	}
	for _, tt := range tests {
		if got := v.valid(tt.body, tt.header); got != tt.want {
			t.Errorf("%s: valid = %v, want %v", tt.name, got, tt.want)
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				body := []byte(strings.Repeat("x", i*k%97))
				if !v.valid(body, Sign(secret, body)) || v.valid(body, Sign(secret, append(body, 'y'))) {
					t.Errorf("goroutine %d, body %d: wrong answer", i, k)
					return
				}
			}
		}()
	}
	wg.Wait()
}
