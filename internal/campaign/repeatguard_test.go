package campaign

import (
	"strings"
	"testing"
)

// A template is guarded by its name, whatever its parameters; a text by a
// digest of the text itself, so two texts never share a guard.
func TestRepeatGuard(t *testing.T) {
	if got := RepeatGuard(KindTemplate, "hello", "ignored"); got != "t:hello" {
		t.Errorf("template guard = %q, want t:hello", got)
	}
	a, b := RepeatGuard(KindText, "", "Hi {{name}}"), RepeatGuard(KindText, "", "Hi there")
	if !strings.HasPrefix(a, "x:") || len(a) != 2+32 || a == b {
		t.Errorf("text guards %q and %q: want x: and 32 hex digits, different texts apart", a, b)
	}
	if again := RepeatGuard(KindText, "other", "Hi {{name}}"); again != a {
		t.Errorf("the same text guarded as %q and %q", a, again)
	}
}
