package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIFlag: run, check and plan take --api and refuse a value that is
// none of cloud, marketing or auto before reading anything.
func TestAPIFlag(t *testing.T) {
	c := newCLI(t)
	csv := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(csv, []byte("phone,name\n+4915112345678,Ana\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"run", "check", "plan"} {
		_, _, err := c.run("campaign", verb, csv, "--sandbox", "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--api", "mm")
		if err == nil || !strings.Contains(err.Error(), `--api "mm": want cloud, marketing or auto`) {
			t.Errorf("campaign %s --api mm: %v; want the choices named", verb, err)
		}
		if _, errOut, err := c.run("campaign", verb, csv, "--sandbox", "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--api", "auto"); err != nil {
			t.Errorf("campaign %s --api auto: %v\n%s", verb, err, errOut)
		}
	}
}
