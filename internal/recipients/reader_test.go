package recipients

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const fixtures = "../../testdata/csv"

// result is everything one pass over a file produced, in a form that
// compares easily: rows, RowError messages, and the fatal error if any.
type result struct {
	rows      []Row
	rowErrs   []*RowError
	fatal     error
	rowErrMsg []string
}

// Header returns the header names as written in the file.
func (rd *Reader) Header() []string { return slices.Clone(rd.header) }

func readAll(t *testing.T, r *Reader) result {
	t.Helper()
	var res result
	for range 10000 { // a bound, so a Next that never ends fails instead of hanging
		row, err := r.Next()
		var re *RowError
		switch {
		case err == nil:
			res.rows = append(res.rows, row)
		case errors.Is(err, io.EOF):
			return res
		case errors.As(err, &re):
			res.rowErrs = append(res.rowErrs, re)
			res.rowErrMsg = append(res.rowErrMsg, re.Error())
		default:
			res.fatal = err
			return res
		}
	}
	t.Fatal("Next did not reach io.EOF")
	return res
}

func openFixture(t *testing.T, name string, opts Options) (*Reader, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Open(f, name, opts)
}

// want is a row reduced to what the fixture tests check.
type want struct {
	line   int
	phone  string
	params []string
	body   string
}

func TestReaderFixtures(t *testing.T) {
	tests := []struct {
		file    string
		opts    Options
		rows    []want
		rowErrs []string
		fatal   string   // prefix of the fatal error from Next
		fatalIs error    // and what it wraps
		header  []string // checked when set
	}{
		{
			file: "bom_crlf.csv",
			opts: Options{Params: []string{"name", "CODE"}, Text: "Hi {{ NAME }}, your code is {{code}}."},
			rows: []want{
				{2, "+4915123456789", []string{"Lena Hoffmann", "A1"}, "Hi Lena Hoffmann, your code is A1."},
				{3, "+447911123456", []string{"Oliver Bennett", "B2"}, "Hi Oliver Bennett, your code is B2."},
			},
			header: []string{"Phone", "Name", "Code"},
		},
		{
			file: "semicolon.csv",
			opts: Options{Region: "DE", Params: []string{"name", "amount"}},
			rows: []want{
				{2, "+4915123456789", []string{"Jonas Weber", "12,50"}, ""},
				{3, "+493012345678", []string{"Sophie Becker", "7,00"}, ""},
				{4, "+447911123456", []string{"Oliver Bennett", "3,10"}, ""},
			},
		},
		{
			file: "tab.tsv",
			opts: Options{Params: []string{"code"}},
			rows: []want{
				{2, "+14155550132", []string{"NYC20"}, ""},
				{3, "+8613800138000", []string{"VIP"}, ""},
			},
		},
		{
			file: "quoted_newline.csv",
			opts: Options{Text: "{{note}}"},
			rows: []want{
				{2, "+4915123456789", nil, "first line\nsecond line\nthird line"},
				{5, "+447911123456", nil, "plain"},
				{7, "+14155550199", nil, `say "hi"`},
			},
		},
		{
			// A template parameter may not hold a line break; the error
			// names the line the record starts on.
			file:    "quoted_newline.csv",
			opts:    Options{Params: []string{"name"}},
			rows:    []want{{2, "+4915123456789", []string{"Lena"}, ""}, {7, "+14155550199", []string{"Ethan"}, ""}},
			rowErrs: []string{`quoted_newline.csv:5: column name: "Oliver\nBennett": line break or tab in parameter {{1}}`},
		},
		{
			file: "blank_lines.csv",
			rows: []want{{3, "+4915123456789", nil, ""}, {8, "+447911123456", nil, ""}},
		},
		{
			file: "ragged.csv",
			opts: Options{Params: []string{"name", "code"}},
			rows: []want{{4, "+14155550199", []string{"Ethan", "C3"}, ""}},
			rowErrs: []string{
				"ragged.csv:2: has 2 fields, header has 3",
				"ragged.csv:3: has 4 fields, header has 3",
				"ragged.csv:5: has 1 field, header has 3",
			},
		},
		{
			// Only the phone is needed, so short records are fine; a long
			// one is still wrong because its values are shifted.
			file: "ragged.csv",
			rows: []want{{2, "+4915123456789", nil, ""}, {4, "+14155550199", nil, ""}, {5, "+12125550187", nil, ""}},
			rowErrs: []string{
				"ragged.csv:3: has 4 fields, header has 3",
			},
		},
		{
			file: "missing_param.csv",
			opts: Options{Params: []string{"name", "code"}},
			rows: []want{{4, "+14155550199", []string{"Ethan", "C3"}, ""}},
			rowErrs: []string{
				"missing_param.csv:2: column code: missing parameter {{2}}",
				"missing_param.csv:3: column name: missing parameter {{1}}",
			},
		},
		{
			file: "missing_param.csv",
			opts: Options{Text: "Hi {{name}}!"},
			rows: []want{{2, "+4915123456789", nil, "Hi Lena!"}, {4, "+14155550199", nil, "Hi Ethan!"}},
			rowErrs: []string{
				"missing_param.csv:3: column name: empty, needed for {{name}} in text",
			},
		},
		{
			file: "mobile_header.csv",
			opts: Options{Params: []string{"name"}},
			rows: []want{{2, "+4915123456789", []string{"Lena"}, ""}},
		},
		{
			file: "msisdn_header.csv",
			opts: Options{Params: []string{"First Name"}},
			rows: []want{{2, "+4915123456789", []string{"Lena"}, ""}, {3, "+447911123456", []string{"Oliver"}, ""}},
		},
		{
			file:   "uppercase.csv",
			opts:   Options{PhoneColumn: "phone", Params: []string{"name", "code"}},
			rows:   []want{{2, "+4915123456789", []string{"Lena", "A1"}, ""}},
			header: []string{"  NAME ", " PHONE ", "CODE"},
		},
		{
			file: "bad_phones.csv",
			rows: []want{{7, "+4915123456789", nil, ""}},
			rowErrs: []string{
				`bad_phones.csv:2: column phone: "12ab": not a number`,
				`bad_phones.csv:3: column phone: empty`,
				`bad_phones.csv:4: column phone: "+49 12": too short`,
				`bad_phones.csv:5: column phone: "0151 23456789": a national number without its country; pass --region CC (e.g. --region DE) or write it with +CC`,
				`bad_phones.csv:6: column phone: "+999 1234567": invalid country code`,
			},
		},
		{
			file: "header_only.csv",
		},
		{
			file:    "bad_quote.csv",
			rows:    []want{{2, "+4915123456789", nil, ""}},
			fatal:   `bad_quote.csv:3:24: bare " in non-quoted-field: a value containing " must be quoted`,
			fatalIs: csv.ErrBareQuote,
		},
		{
			file:    "unterminated_quote.csv",
			fatal:   `unterminated_quote.csv:3:24: extraneous or missing " in quoted-field: expected a closing " followed by a delimiter or end of line (the record starts on line 2)`,
			fatalIs: csv.ErrQuote,
		},
		{
			file:    "latin1.csv",
			fatal:   "latin1.csv:2: column name: not UTF-8: save the file as CSV UTF-8",
			fatalIs: ErrEncoding,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.Join(tt.opts.Params, ",")+tt.opts.Text, func(t *testing.T) {
			r, err := openFixture(t, tt.file, tt.opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if tt.header != nil && !slices.Equal(r.Header(), tt.header) {
				t.Errorf("Header() = %q, want %q", r.Header(), tt.header)
			}
			res := readAll(t, r)
			var got []want
			for _, row := range res.rows {
				got = append(got, want{row.Line, row.Phone, row.Params, row.Body})
			}
			if !slices.EqualFunc(got, tt.rows, func(a, b want) bool {
				return a.line == b.line && a.phone == b.phone && slices.Equal(a.params, b.params) && a.body == b.body
			}) {
				t.Errorf("rows:\n got %+v\nwant %+v", got, tt.rows)
			}
			if !slices.Equal(res.rowErrMsg, tt.rowErrs) {
				t.Errorf("row errors:\n got %q\nwant %q", res.rowErrMsg, tt.rowErrs)
			}
			switch {
			case tt.fatal == "" && res.fatal != nil:
				t.Errorf("fatal error: %v", res.fatal)
			case tt.fatal != "" && (res.fatal == nil || !strings.HasPrefix(res.fatal.Error(), tt.fatal)):
				t.Errorf("fatal error = %v, want prefix %q", res.fatal, tt.fatal)
			case tt.fatalIs != nil && !errors.Is(res.fatal, tt.fatalIs):
				t.Errorf("fatal error %v does not wrap %v", res.fatal, tt.fatalIs)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		opts   Options
		want   string
		wantIs error
	}{
		{"empty file", "empty.csv", Options{}, "empty.csv: empty file, expected a header line", ErrEmptyFile},
		{"no phone column", "no_phone_column.csv", Options{},
			"no_phone_column.csv:1: no phone column: expected a column named like Phone, Mobile Phone, Cell, WhatsApp, msisdn, wa_id, Telefon, Handy, Mobilnummer, Téléphone portable, Celular, Móvil or Telefone, or name it with --phone-column (header: name, email, code)", ErrNoPhoneColumn},
		{"named phone column missing", "mobile_header.csv", Options{PhoneColumn: "tel"},
			`mobile_header.csv:1: no phone column: no column "tel" (header: Name, Mobile, Code)`, ErrNoPhoneColumn},
		{"unknown param", "mobile_header.csv", Options{Params: []string{"name", "nmae"}},
			`mobile_header.csv:1: unknown column "nmae" in params (header: Name, Mobile, Code)`, ErrUnknownColumn},
		{"unknown placeholder", "mobile_header.csv", Options{Text: "Hi {{ first_name }}"},
			`mobile_header.csv:1: unknown column "first_name" in text placeholder {{ first_name }} (header: Name, Mobile, Code)`, ErrUnknownColumn},
		{"duplicate header", "duplicate_header.csv", Options{},
			`duplicate_header.csv:1: duplicate column "name" (columns 2 and 4)`, ErrDuplicateColumn},
		{"unknown region", "mobile_header.csv", Options{Region: "XX"},
			`mobile_header.csv: unknown region "XX" (want an ISO 3166 code such as DE)`, ErrUnknownRegion},
		{"utf-16", "utf16.csv", Options{},
			"utf16.csv: not UTF-8: the file is UTF-16; save it as CSV UTF-8", ErrEncoding},
		{"bad delimiter", "mobile_header.csv", Options{Delimiter: '"'},
			`mobile_header.csv: invalid delimiter '"'`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := openFixture(t, tt.file, tt.opts)
			if err == nil {
				t.Fatalf("Open succeeded with header %q", r.Header())
			}
			if err.Error() != tt.want {
				t.Errorf("Open error:\n got %s\nwant %s", err, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Open error %v does not wrap %v", err, tt.wantIs)
			}
		})
	}
}

func TestDetectDelimiter(t *testing.T) {
	tests := []struct {
		head string
		want rune
	}{
		{"phone,name,code\n", ','},
		{"phone;name;code\r\n", ';'},
		{"phone\tname\tcode", '\t'},
		{"phone\n", ','},
		{"", ','},
		{`"phone;mobile",name` + "\n", ','}, // delimiters inside quotes don't count
		{"phone;name,with comma;code\n", ';'},
		{"phone,name\nx;y;z;w\n", ','}, // only the first line counts
	}
	for _, tt := range tests {
		if got := detectDelimiter([]byte(tt.head)); got != tt.want {
			t.Errorf("detectDelimiter(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

func TestReaderInline(t *testing.T) {
	long := strings.Repeat("x", MaxTextLen)
	tests := []struct {
		name    string
		csv     string
		opts    Options
		rows    int
		rowErrs []string
	}{
		{"text too long", "phone,name\n+49 151 23456789,Lena\n", Options{Text: long + "{{name}}"}, 0,
			[]string{"in.csv:2: message is 4100 characters, limit is 4096"}},
		{"text at limit counts characters not bytes", "phone,name\n+49 151 23456789,Jürgen\n",
			Options{Text: long[:MaxTextLen-6] + "{{name}}"}, 1, nil},
		{"five spaces in param", "phone,name\n+49 151 23456789,Lena     Hoffmann\n", Options{Params: []string{"name"}}, 0,
			[]string{`in.csv:2: column name: "Lena     Hoffmann": more than 4 spaces in a row in parameter {{1}}`}},
		{"params are trimmed", "phone,name\n+49 151 23456789,  Lena  \n", Options{Params: []string{"name"}}, 1, nil},
		{"explicit delimiter", "phone|name\n+49 151 23456789|Lena\n", Options{Delimiter: '|', Params: []string{"name"}}, 1, nil},
		{"header with trailing empty columns", "phone,name,,\n+49 151 23456789,Lena,,\n", Options{}, 1, nil},
		{"no trailing newline", "phone\n+49 151 23456789", Options{}, 1, nil},
		{"wa_id column", "wa_id,number\n4915123456789,17\n", Options{}, 1, nil},
		// The names people's files give the phone column, found without --phone-column.
		{"Phone Number column", "Name,Phone Number\nLena,+49 151 23456789\n", Options{}, 1, nil},
		{"Mobile Number column", "Mobile Number,Order Number\n+49 151 23456789,17\n", Options{}, 1, nil},
		{"WhatsApp column", "name,WhatsApp\nLena,+49 151 23456789\n", Options{}, 1, nil},
		{"Telefon column", "Name;Telefon\nLena;+49 151 23456789\n", Options{}, 1, nil},
		{"Teléfono column", "Nombre,Teléfono\nAna,+34 612 345 678\n", Options{}, 1, nil},
		{"Celular column", "Nome,Celular\nAna,+55 11 91234 5678\n", Options{}, 1, nil},
		{"Google Contacts export", "Name,Given Name,Phone 1 - Type,Phone 1 - Value\nLena,Lena,Mobile,+49 151 23456789\n", Options{}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(strings.NewReader(tt.csv), "in.csv", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			res := readAll(t, r)
			if res.fatal != nil {
				t.Fatal(res.fatal)
			}
			if len(res.rows) != tt.rows || !slices.Equal(res.rowErrMsg, tt.rowErrs) {
				t.Errorf("got %d rows, errors %q; want %d rows, errors %q", len(res.rows), res.rowErrMsg, tt.rows, tt.rowErrs)
			}
		})
	}
}

func TestReaderPhoneErrorUnwraps(t *testing.T) {
	r, err := Open(strings.NewReader("phone\n+49 12\n"), "in.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var re *RowError
	if !errors.As(err, &re) || !errors.Is(err, ErrTooShort) {
		t.Fatalf("Next() error = %v, want a *RowError wrapping ErrTooShort", err)
	}
	if re.Line != 2 || re.Column != "phone" || re.Value != "+49 12" {
		t.Errorf("RowError = %+v", re)
	}
}

func TestReaderDuplicates(t *testing.T) {
	in := "phone\n+49 151 23456789\n+44 7911 123456\n0049 (151) 2345-6789\n4915123456789\n"
	r, err := Open(strings.NewReader(in), "in.csv", Options{FindDuplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	res := readAll(t, r)
	var dups []int
	for _, row := range res.rows {
		dups = append(dups, row.DuplicateOf)
	}
	if want := []int{0, 0, 2, 2}; !slices.Equal(dups, want) {
		t.Errorf("DuplicateOf = %v, want %v", dups, want)
	}
}

// TestDemoRecipients pins the demo list used by `wasend campaign run
// --sandbox testdata/recipients.csv`: 40 people, 2 bad numbers to show error
// reporting, and 1 person listed twice in another format.
func TestDemoRecipients(t *testing.T) {
	f, err := os.Open("../../testdata/recipients.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Open(f, "recipients.csv", Options{Params: []string{"name", "code"}, FindDuplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	res := readAll(t, r)
	if res.fatal != nil {
		t.Fatal(res.fatal)
	}
	if len(res.rowErrs) != 2 {
		t.Errorf("got %d row errors, want 2: %q", len(res.rowErrs), res.rowErrMsg)
	}
	byPhone := map[string]int{}
	var usable int
	for _, row := range res.rows {
		if row.DuplicateOf != 0 {
			if first, ok := byPhone[row.Phone]; !ok || first != row.DuplicateOf {
				t.Errorf("line %d: DuplicateOf = %d, but %s first appeared on line %d", row.Line, row.DuplicateOf, row.Phone, first)
			}
			if row.Input == res.rows[slices.IndexFunc(res.rows, func(x Row) bool { return x.Line == row.DuplicateOf })].Input {
				t.Errorf("line %d: duplicate is written the same way as line %d; the demo wants another format", row.Line, row.DuplicateOf)
			}
			continue
		}
		byPhone[row.Phone] = row.Line
		usable++
	}
	if usable != 40 || len(res.rows) != 41 {
		t.Errorf("got %d rows, %d usable; want 41 rows, 40 usable", len(res.rows), usable)
	}
}

// benchCSV is an n-row list, phone plus three params. international mixes
// four countries' formats; otherwise every number is German, national.
func benchCSV(n int, international bool) []byte {
	var b strings.Builder
	b.WriteString("phone,name,code,city\n")
	for i := range n {
		switch {
		case !international:
			fmt.Fprintf(&b, "0151 %08d,Jonas Weber,CODE%d,Köln\n", i, i)
		case i%4 == 0:
			fmt.Fprintf(&b, "+49 151 %08d,Lena Hoffmann,CODE%d,Berlin\n", i, i)
		case i%4 == 1:
			fmt.Fprintf(&b, "0044 7911 %06d,Oliver Bennett,CODE%d,Leeds\n", i%1000000, i)
		case i%4 == 2:
			fmt.Fprintf(&b, "+1 (415) 555-%04d,\"Rivera, Daniel\",CODE%d,San Francisco\n", i%10000, i)
		default:
			fmt.Fprintf(&b, "+91 98765 %05d,Priya Sharma,CODE%d,Mumbai\n", i%100000, i)
		}
	}
	return []byte(b.String())
}

func BenchmarkReader(b *testing.B) {
	const n = 100_000
	for _, bc := range []struct {
		name          string
		international bool
		region        string
	}{
		{"international", true, ""},
		{"national-DE", false, "DE"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := benchCSV(n, bc.international)
			opts := Options{Region: bc.region, Params: []string{"name", "code", "city"}}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open(bytes.NewReader(data), "bench.csv", opts)
				if err != nil {
					b.Fatal(err)
				}
				rows := 0
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows++
				}
				if rows != n {
					b.Fatalf("read %d rows, want %d", rows, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}
