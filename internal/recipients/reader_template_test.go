package recipients

import (
	"slices"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

func TestReaderTemplateShape(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		rows    []Row // Line, Params, Header, Buttons checked
		rowErrs []string
	}{
		{
			name: "text header and button",
			opts: Options{Params: []string{"name"}, Header: &campaign.Header{Type: campaign.HeaderText, Column: "title"},
				Buttons: []campaign.Button{{Index: 1, Column: "order"}}},
			rows: []Row{
				{Line: 2, Params: []string{"Lena"}, Header: "Spring sale", Buttons: []string{"order/1"}},
				{Line: 3, Params: []string{"Jonas"}, Header: "Spring sale", Buttons: []string{"order/2"}},
				{Line: 5, Params: []string{"Noah"}, Header: "Spring sale", Buttons: []string{"order/4"}},
			},
			rowErrs: []string{
				"template_shape.csv:4: column title: missing header parameter",
				`template_shape.csv:6: column order: missing URL button 1 parameter`,
				`template_shape.csv:7: column title: "Spring\tsale": line break or tab in header parameter`,
			},
		},
		{
			name: "image header link or id",
			opts: Options{Header: &campaign.Header{Type: campaign.HeaderImage, Column: "banner"}},
			rows: []Row{
				{Line: 2, Header: "https://example.com/a.jpg"},
				{Line: 3, Header: "1013859600285441"},
				{Line: 4, Header: "https://example.com/a.jpg"},
				{Line: 6, Header: "https://example.com/a.jpg"},
			},
			rowErrs: []string{
				`template_shape.csv:5: column banner: "https://example.com/my banner.jpg": space or line break in header image link or id`,
				`template_shape.csv:7: column banner: "https://": header image link is not a valid URL`,
			},
		},
		{
			name: "named params name the parameter",
			opts: Options{Params: []string{"name", "Title"}, NamedParams: true},
			rows: []Row{
				{Line: 2, Params: []string{"Lena", "Spring sale"}},
				{Line: 3, Params: []string{"Jonas", "Spring sale"}},
				{Line: 5, Params: []string{"Noah", "Spring sale"}},
				{Line: 6, Params: []string{"Emma", "Spring sale"}},
			},
			rowErrs: []string{
				"template_shape.csv:4: column title: missing parameter {{Title}}",
				`template_shape.csv:7: column title: "Spring\tsale": line break or tab in parameter {{Title}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := openFixture(t, "template_shape.csv", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			res := readAll(t, r)
			if res.fatal != nil {
				t.Fatal(res.fatal)
			}
			if !slices.Equal(res.rowErrMsg, tt.rowErrs) {
				t.Errorf("row errors:\n got %q\nwant %q", res.rowErrMsg, tt.rowErrs)
			}
			if len(res.rows) != len(tt.rows) {
				t.Fatalf("got %d rows, want %d: %+v", len(res.rows), len(tt.rows), res.rows)
			}
			for i, got := range res.rows {
				w := tt.rows[i]
				if got.Line != w.Line || !slices.Equal(got.Params, w.Params) || got.Header != w.Header || !slices.Equal(got.Buttons, w.Buttons) {
					t.Errorf("row %d = line %d params %q header %q buttons %q; want line %d params %q header %q buttons %q",
						i, got.Line, got.Params, got.Header, got.Buttons, w.Line, w.Params, w.Header, w.Buttons)
				}
			}
		})
	}
}

func TestReaderTemplateLimits(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		opts    Options
		wantErr string // "" = the row is usable
	}{
		{"header text at limit", strings.Repeat("é", MaxHeaderTextLen), Options{Header: &campaign.Header{Type: campaign.HeaderText, Column: "v"}}, ""},
		{"header text too long", strings.Repeat("é", MaxHeaderTextLen+1), Options{Header: &campaign.Header{Type: campaign.HeaderText, Column: "v"}},
			"header parameter is 61 characters, limit is 60"},
		{"header text five spaces", "a     b", Options{Header: &campaign.Header{Type: campaign.HeaderText, Column: "v"}},
			"more than 4 spaces in a row in header parameter"},
		{"body at limit", strings.Repeat("x", MaxBodyParamLen), Options{Params: []string{"v"}}, ""},
		{"body too long", strings.Repeat("x", MaxBodyParamLen+1), Options{Params: []string{"v"}},
			"parameter {{1}} is 1025 characters, limit is 1024"},
		{"button at limit", strings.Repeat("x", MaxButtonURLLen), Options{Buttons: []campaign.Button{{Index: 0, Column: "v"}}}, ""},
		{"button too long", strings.Repeat("x", MaxButtonURLLen+1), Options{Buttons: []campaign.Button{{Index: 0, Column: "v"}}},
			"URL button 0 parameter is 2001 characters, limit is 2000"},
		{"button five spaces", "a     b", Options{Buttons: []campaign.Button{{Index: 2, Column: "v"}}},
			"more than 4 spaces in a row in URL button 2 parameter"},
		{"document id", "4490709327384033", Options{Header: &campaign.Header{Type: campaign.HeaderDocument, Column: "v"}}, ""},
		{"video missing", "", Options{Header: &campaign.Header{Type: campaign.HeaderVideo, Column: "v"}}, "missing header video link or id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(strings.NewReader("phone,v\n+49 151 23456789,"+tt.value+"\n"), "in.csv", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			res := readAll(t, r)
			switch {
			case res.fatal != nil:
				t.Fatal(res.fatal)
			case tt.wantErr == "" && len(res.rows) != 1:
				t.Errorf("row not usable: %q", res.rowErrMsg)
			case tt.wantErr != "" && (len(res.rowErrMsg) != 1 || !strings.HasSuffix(res.rowErrMsg[0], tt.wantErr)):
				t.Errorf("row errors %q, want one ending in %q", res.rowErrMsg, tt.wantErr)
			}
		})
	}
}

func TestOpenTemplateShapeUnknownColumn(t *testing.T) {
	for _, opts := range []Options{
		{Header: &campaign.Header{Type: campaign.HeaderImage, Column: "banner"}},
		{Buttons: []campaign.Button{{Index: 0, Column: "banner"}}},
	} {
		_, err := Open(strings.NewReader("phone,name\n"), "in.csv", opts)
		if err == nil || !strings.Contains(err.Error(), `unknown column "banner"`) {
			t.Errorf("Open(%+v) = %v, want unknown column", opts, err)
		}
	}
}
