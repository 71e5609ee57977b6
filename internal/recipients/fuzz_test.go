package recipients

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasend/wasend/internal/campaign"
)

// fuzzRegions are the default regions the fuzzers try: none, and countries
// whose numbering plans differ in trunk prefixes and lengths.
var fuzzRegions = []string{"", "DE", "US", "GB", "IN", "BR", "CN"}

// e164 is what every accepted number must look like: E.164 allows 15 digits
// at most. The fewest are 6 (minDigits): libphonenumber's metadata holds
// valid numbers that short, such as German pagers ("+491680"), and 7-digit
// fixed lines in Niue ("+6834002").
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{5,14}$`)

func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{
		"+49 151 23456789", "0151 23456789", "0049 (151) 2345-6789", "+49 (0)151 23456789",
		"4915123456789", "(415) 555-2671", "+1.415.555.2671", "020.7946.0018", "07400 123456",
		"+86 138-0013-8000", "8613800138000", "98765 43210", "(11) 91234-5678", "030/12345678",
		"", " ", "+", "00", "0", "+0049151", "12ab", "1-800-FLOWERS", "+999 1234567",
		"+49 151 234567890123456", "\t+44\t7911\t123456", "٠١٥١٢٣٤٥٦٧٨٩", "+49\u00a0151 23456789",
	} {
		for i := range fuzzRegions {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, input string, r uint8) {
		region := fuzzRegions[int(r)%len(fuzzRegions)]
		got, err := NormalizePhone(input, region)
		if err != nil {
			if got != "" {
				t.Fatalf("NormalizePhone(%q, %q) = %q with error %v", input, region, got, err)
			}
			return
		}
		if !e164.MatchString(got) {
			t.Fatalf("NormalizePhone(%q, %q) = %q, not E.164", input, region, got)
		}
		again, err := NormalizePhone(got, region)
		if err != nil || again != got {
			t.Fatalf("NormalizePhone(%q, %q) = %q, but normalising that gives %q, %v", input, region, got, again, err)
		}
		// The result must not depend on the region it was read with once it
		// carries a "+".
		if other, err := NormalizePhone(got, ""); err != nil || other != got {
			t.Fatalf("NormalizePhone(%q, %q) = %q, but with no region it gives %q, %v", input, region, got, other, err)
		}
	})
}

// fuzzOpts are the option sets FuzzReader reads with; every one refers to
// columns of fuzzHeader, and some also (or only) to columns that the fuzzed
// bytes may or may not have.
var fuzzOpts = []Options{
	{},
	{Params: []string{"name"}},
	{Text: "Hi {{name}}"},
	{Params: []string{"name"}, NamedParams: true, Region: "DE"},
	{PhoneColumn: "name", Region: "US"},
	{Delimiter: ';', Params: []string{"name"}, Region: "GB"},
	{Delimiter: '\t', Region: "IN"},
	{Params: []string{"name", "code"}, Region: "BR"},
}

const fuzzHeader = "phone,name\n"

func FuzzReader(f *testing.F) {
	// testdata/fuzz/FuzzReader holds seeds for the awkward cases; every
	// file of the CSV corpus is a seed too, so a new fixture is a new seed.
	files, err := filepath.Glob(filepath.Join(fixtures, "*.*sv"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures in %s: %v", fixtures, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzOpts {
			f.Add(data, false, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, addHeader bool, o uint8) {
		opts := fuzzOpts[int(o)%len(fuzzOpts)]
		opts.FindDuplicates = true
		in := data
		if addHeader {
			in = append([]byte(fuzzHeader), data...)
		}
		r, err := Open(bytes.NewReader(in), "fuzz.csv", opts)
		if err != nil {
			if r != nil {
				t.Fatalf("Open returned a Reader and error %v", err)
			}
			return
		}
		if addHeader && strings.Join(r.Header(), ",") != "phone,name" && opts.Delimiter == 0 {
			t.Fatalf("Header() = %q, want [phone name]", r.Header())
		}
		prev := 1 // the header is on line 1 at least; every record starts after it
		seen := map[string]int{}
		// Every record but the header takes at least one byte, so this many
		// calls must reach the end.
		for range len(in) + 2 {
			row, err := r.Next()
			var re *RowError
			switch {
			case errors.Is(err, io.EOF):
				if _, err := r.Next(); !errors.Is(err, io.EOF) {
					t.Fatalf("Next after io.EOF = %v, want io.EOF", err)
				}
				return
			case errors.As(err, &re):
				if re.Line <= prev {
					t.Fatalf("row error on line %d after line %d: %v", re.Line, prev, re)
				}
				if re.Reason == "" || re.File != "fuzz.csv" {
					t.Fatalf("RowError %+v without reason or file", re)
				}
				prev = re.Line
				continue
			case err != nil:
				return // fatal: the rest of the file cannot be trusted
			}
			if row.Line <= prev {
				t.Fatalf("row on line %d after line %d", row.Line, prev)
			}
			prev = row.Line
			if campaign.IsBSUID(row.Phone) {
				// A person known by a business-scoped user id: the id as
				// written is the recipient.
				if row.Input != row.Phone || row.UserID != row.Phone {
					t.Fatalf("line %d: Phone %q is a user id, but Input %q and UserID %q are not", row.Line, row.Phone, row.Input, row.UserID)
				}
			} else if !e164.MatchString(row.Phone) {
				t.Fatalf("line %d: Phone %q (input %q) is not E.164", row.Line, row.Phone, row.Input)
			} else if p, err := NormalizePhone(row.Input, opts.Region); err != nil || p != row.Phone {
				t.Fatalf("line %d: Phone %q, but NormalizePhone(%q, %q) = %q, %v", row.Line, row.Phone, row.Input, opts.Region, p, err)
			}
			if row.Input != strings.TrimSpace(row.Input) {
				t.Fatalf("line %d: Input %q not trimmed", row.Line, row.Input)
			}
			if len(row.Params) != len(opts.Params) {
				t.Fatalf("line %d: %d params, want %d", row.Line, len(row.Params), len(opts.Params))
			}
			for _, p := range row.Params {
				if p == "" || strings.ContainsAny(p, "\r\n\t") || strings.Contains(p, "     ") ||
					p != strings.TrimSpace(p) || !utf8.ValidString(p) || utf8.RuneCountInString(p) > MaxBodyParamLen {
					t.Fatalf("line %d: unusable parameter %q", row.Line, p)
				}
			}
			if opts.Text != "" && (row.Body == "" || utf8.RuneCountInString(row.Body) > MaxTextLen) {
				t.Fatalf("line %d: body %q", row.Line, row.Body)
			}
			first, dup := seen[row.Phone]
			switch {
			case dup && row.DuplicateOf != first:
				t.Fatalf("line %d: DuplicateOf = %d, want %d", row.Line, row.DuplicateOf, first)
			case !dup && row.DuplicateOf != 0:
				t.Fatalf("line %d: DuplicateOf = %d for the first %s", row.Line, row.DuplicateOf, row.Phone)
			case !dup:
				seen[row.Phone] = row.Line
			}
		}
		t.Fatalf("Next did not reach io.EOF after %d calls on %d bytes", len(in)+2, len(in))
	})
}
