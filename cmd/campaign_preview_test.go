package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// previewCSV has every template input; line 3's title is longer than a
// header's 60 characters.
const previewCSV = "phone,customer_name,order_id,title,banner,path\n" +
	"+49 151 23456789,Ana,1234,Your order,https://example.com/a.jpg,order/1234\n" +
	"+49 151 23456790,Ben,1235," + "A title that is far too long for the header of a WhatsApp template" + ",4490709327384033,order/1235\n"

func writePreviewCSV(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orders.csv")
	if err := os.WriteFile(path, []byte(previewCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCampaignPreview(t *testing.T) {
	list := writePreviewCSV(t)
	base := []string{"campaign", "preview", list, "--template", "order_update", "--lang", "en_US"}
	tests := []struct {
		golden string
		args   []string
	}{
		{"campaign_preview_positional.golden", []string{"--params", "customer_name,order_id"}},
		{"campaign_preview_all.golden", []string{"--params", "customer_name,order_id", "--named-params",
			"--header-image", "banner", "--button-param", "0=path", "--button-param", "1=order_id"}},
		{"campaign_preview_media_id.golden", []string{"--header-document", "banner", "--row", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			c := newCLI(t)
			out, errOut, err := c.run(append(base, tt.args...)...)
			if err != nil {
				t.Fatalf("preview: %v\n%s", err, errOut)
			}
			goldenFile(t, tt.golden, out)
			if _, err := os.Stat(c.db); !os.IsNotExist(err) {
				t.Errorf("preview touched the database %s (stat: %v)", c.db, err)
			}
		})
	}
}

func TestCampaignPreviewSkippedRow(t *testing.T) {
	c := newCLI(t)
	list := writePreviewCSV(t)
	args := []string{"campaign", "preview", list, "--template", "order_update", "--lang", "en_US", "--header-param", "title"}

	// The first usable row is shown; row 2 is refused with its reason.
	out, errOut, err := c.run(args...)
	if err != nil || !strings.Contains(out, `"text": "Your order"`) {
		t.Fatalf("preview = %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	out, _, err = c.run(append(args, "--row", "2")...)
	if err == nil || out != "" {
		t.Fatalf("preview --row 2 = %v, stdout %q; want an error and no output", err, out)
	}
	var msg strings.Builder
	if code := exitCode(err, &msg); code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{"data row 2 would be skipped", "orders.csv:3", "column title", "header parameter is 66 characters, limit is 60"} {
		if !strings.Contains(msg.String(), want) {
			t.Errorf("error %q lacks %q", msg.String(), want)
		}
	}
	if _, _, err := c.run(append(args, "--row", "3")...); err == nil || !strings.Contains(err.Error(), "asked for data row 3, the file has 2") {
		t.Errorf("preview --row 3 = %v, want no such row", err)
	}
}

func TestTemplateFlagUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantMsg string
	}{
		{"two header flags", []string{"--header-param", "title", "--header-image", "banner"}, "--header-param and --header-image"},
		{"button without index", []string{"--button-param", "path"}, "want INDEX=COLUMN"},
		{"button index not a number", []string{"--button-param", "x=path"}, "want INDEX=COLUMN"},
		{"button without column", []string{"--button-param", "0="}, "want INDEX=COLUMN"},
		{"button index too big", []string{"--button-param", "10=path"}, "between 0 and 9"},
		{"button twice", []string{"--button-param", "0=path", "--button-param", "0=order_id"}, "button 0 is given twice"},
		{"named without params", []string{"--named-params"}, "--named-params needs --params"},
	}
	list := filepath.Join(t.TempDir(), "none.csv") // usage is checked before the file is read
	for _, tt := range tests {
		for _, verb := range []string{"run", "preview", "check"} {
			t.Run(verb+" "+tt.name, func(t *testing.T) {
				c := newCLI(t)
				args := append([]string{"campaign", verb, list, "--template", "t", "--lang", "en"}, tt.args...)
				if msg := c.usage(args...); !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("error %q does not mention %q", msg, tt.wantMsg)
				}
			})
		}
	}
	t.Run("text with template flags", func(t *testing.T) {
		c := newCLI(t)
		if msg := c.usage("campaign", "preview", list, "--text", "hi", "--ignore-window", "--header-param", "title"); !strings.Contains(msg, "--text excludes") {
			t.Errorf("error %q", msg)
		}
	})
}
