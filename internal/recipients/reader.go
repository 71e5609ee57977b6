// Package recipients reads recipient lists: a CSV with a header line, one
// recipient per record. It streams the file, normalises phone numbers to
// E.164 and extracts template parameters, reporting unusable records one by
// one so that a caller can list them all and still send to the rest.
package recipients

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/numberset"
)

// Whole-file problems, returned by Open wrapped with the file name and line.
var (
	ErrEmptyFile       = errors.New("empty file, expected a header line")
	ErrNoPhoneColumn   = errors.New("no phone column")
	ErrUnknownColumn   = errors.New("unknown column")
	ErrDuplicateColumn = errors.New("duplicate column")
	ErrEncoding        = errors.New("not UTF-8")
)

// MaxTextLen is the Cloud API's limit for a text message body, in characters.
const MaxTextLen = 4096

// Limits on template parameters, in characters
// (docs/cloud-api.md#template-message). The body limit is the one for
// templates with more than a body; wasend applies it always rather than
// guess the template's other components.
const (
	MaxHeaderTextLen = 60
	MaxBodyParamLen  = 1024
	MaxButtonURLLen  = 2000
)

// userIDColumns name a column of business-scoped user ids, in order of
// preference.
var userIDColumns = []string{"user_id", "bsuid", "wa_user_id"}

// tzColumns name a recipient's IANA time zone, in order of preference.
var tzColumns = []string{"tz", "timezone", "time_zone"}

// placeholder matches {{ name }} in Options.Text.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// Options say how to read a recipient list.
type Options struct {
	Region      string // default country (ISO 3166 alpha-2, e.g. "DE") for national-format numbers; "" = only international numbers accepted
	PhoneColumn string // "" = auto: the best phone-like column (PickPhoneColumn)
	// UserIDColumn names the column of business-scoped user ids; "" =
	// auto: user_id, bsuid or wa_user_id when the header has one.
	UserIDColumn string
	Params       []string // columns whose values fill template body parameters {{1}}, {{2}}, … in order
	Text         string   // plain-text message with {{column}} placeholders; may be used with or without Params
	NamedParams  bool     // Params are named body parameters: reasons say {{column}}, not {{1}}
	// Header is the column of the template's header parameter, nil for none.
	Header *campaign.Header
	// Buttons are the columns of URL button parameters.
	Buttons   []campaign.Button
	Delimiter rune // 0 = detect from the header line among ',', ';', '\t'
	// FindDuplicates sets Row.DuplicateOf. It keeps a set of the numbers
	// seen, growing with the file; an importer whose store rejects
	// duplicates itself leaves it off and reads in constant memory.
	FindDuplicates bool
}

// Row is one usable recipient.
type Row struct {
	Line  int    // 1-based line where the record starts (the header is usually line 1)
	Input string // phone as written, without surrounding spaces (the user id when the phone is empty)
	// Phone is the recipient: E.164 with '+', or the business-scoped user
	// id of a row with none (campaign.IsBSUID; sent in the request's
	// recipient field).
	Phone string
	// UserID is the row's business-scoped user id ("" when none): from
	// the user id column, or the phone column when it holds one. A row
	// with a phone and a user id is sent to the phone.
	UserID  string
	Params  []string // values of Options.Params, in order, trimmed
	Body    string   // Options.Text rendered with this row's values ("" when Text is "")
	Header  string   // value of Options.Header's column, trimmed ("" when there is none)
	Buttons []string // values of Options.Buttons' columns, in order, trimmed
	// TZ is the value of the file's time-zone column (tz, timezone or
	// time_zone), trimmed; "" when the file has none. A send window reads
	// it (see Zones).
	TZ string
	// Zones are the recipient's time zones, comma-separated, found by
	// screening when the campaign has a send window; "" otherwise.
	Zones string
	// DuplicateOf is the line of an earlier row with the same Phone, 0 if
	// none: the row is valid, but sending it would message someone twice.
	DuplicateOf int
}

// RowError is a problem with one record: the caller reports it and goes on.
type RowError struct {
	File   string
	Line   int
	Column string // header name, "" when the problem is the whole record
	Value  string // the offending value as written, "" when there is none
	Reason string
	Err    error // the cause, for errors.Is (e.g. ErrTooShort); may be nil
}

func (e *RowError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	if e.Column != "" {
		fmt.Fprintf(&b, "column %s: ", e.Column)
	}
	if e.Value != "" {
		fmt.Fprintf(&b, "%q: ", e.Value)
	}
	b.WriteString(e.Reason)
	return b.String()
}

func (e *RowError) Unwrap() error { return e.Err }

// segment is a piece of Options.Text: literal text, or a column's value
// when col >= 0.
type segment struct {
	lit string
	col int
}

// Reader yields the rows of one recipient list. It holds one record at a
// time (plus, with FindDuplicates, the set of phones seen); a Reader is not safe
// for concurrent use, but separate Readers share no mutable state.
// MaxField bounds one field; MaxRecord bounds what is read for one record,
// so an unclosed quote can't pull the rest of a large file into memory.
const (
	MaxField  = 64 << 10
	MaxRecord = 1 << 20
)

// ErrRecordTooLong is a record longer than MaxRecord: usually a quote that
// is never closed.
var ErrRecordTooLong = errors.New("record over 1 MiB: is a quote left unclosed?")

// budgetReader fails once more than MaxRecord bytes were read since n was
// last reset (at each record). bufio reads ahead, so the bound is loose by
// one buffer, which is all it needs to be.
type budgetReader struct {
	r io.Reader
	n int
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n > MaxRecord {
		return 0, ErrRecordTooLong
	}
	n, err := b.r.Read(p)
	b.n += n
	return n, err
}

// crReader reads lone CRs as LFs.
type crReader struct{ r io.Reader }

func (c crReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := range p[:n] {
		if p[i] == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

type Reader struct {
	file      string
	csv       *csv.Reader
	header    []string
	region    string
	regionCC  string
	phone     PhoneColumn
	phoneCol  int // -1: no phone column, user ids only
	userCol   int // -1: no user id column
	paramCols []int
	paramWhat []string // how reasons name each parameter: "parameter {{1}}"
	headerTyp campaign.HeaderType
	headerCol int // -1: no header parameter
	tzCol     int // -1: no time-zone column
	buttons   []campaign.Button
	buttonCol []int
	text      []segment
	textLit   int // characters of literal text, to size the body buffer
	needed    int // fields a record must have to reach every used column
	budget    *budgetReader
	seen      *numberset.Set
}

// Open reads the header and checks it against opts. Whole-file problems
// (empty file, no phone column, a Params column or {{column}} placeholder
// that is not in the header, duplicate header names, unknown region) are
// returned here, prefixed with the file name and line.
func Open(r io.Reader, file string, opts Options) (*Reader, error) {
	rd := &Reader{file: file}
	if opts.FindDuplicates {
		rd.seen = numberset.New()
	}
	rd.region = strings.ToUpper(strings.TrimSpace(opts.Region))
	if rd.region != "" {
		cc := phonenumbers.GetCountryCodeForRegion(rd.region)
		if cc == 0 {
			return nil, fmt.Errorf("%s: %w %q (want an ISO 3166 code such as DE)", file, ErrUnknownRegion, opts.Region)
		}
		rd.regionCC = strconv.Itoa(cc)
	}

	rd.budget = &budgetReader{r: r}
	br := bufio.NewReaderSize(rd.budget, 64<<10)
	// Peek fills the buffer (or reaches EOF) without consuming anything, so
	// the delimiter can be chosen before encoding/csv sees the first byte.
	head, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3) // cannot fail: the bytes are buffered
		head = head[3:]
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return nil, fmt.Errorf("%s: %w: the file is UTF-16; save it as CSV UTF-8", file, ErrEncoding)
	}
	if bytes.IndexByte(head, '\r') >= 0 && bytes.IndexByte(head, '\n') < 0 {
		// Old Mac Excel ends lines with CR alone, which encoding/csv
		// doesn't split on: read those CRs as line ends.
		br = bufio.NewReaderSize(crReader{br}, 64<<10)
		head = bytes.ReplaceAll(head, []byte{'\r'}, []byte{'\n'})
	}
	delim := opts.Delimiter
	if delim == 0 {
		delim = detectDelimiter(head)
	}
	if delim == '"' || delim == '\r' || delim == '\n' || delim == utf8.RuneError || !utf8.ValidRune(delim) {
		return nil, fmt.Errorf("%s: invalid delimiter %q", file, delim)
	}

	rd.csv = csv.NewReader(br)
	rd.csv.Comma = delim
	rd.csv.FieldsPerRecord = -1
	rd.csv.ReuseRecord = true
	rd.csv.LazyQuotes = false

	rec, err := rd.csv.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", file, ErrEmptyFile)
	}
	if err != nil {
		return nil, rd.fatal(err)
	}
	line, _ := rd.csv.FieldPos(0)
	rd.header = slices.Clone(rec) // ReuseRecord: the slice is overwritten by the next Read
	if err := rd.checkUTF8(rec, line); err != nil {
		return nil, err
	}
	if err := rd.resolve(opts, line); err != nil {
		return nil, err
	}
	return rd, nil
}

// detectDelimiter counts candidate delimiters outside quotes on the first
// line. Ties and a single-column header fall back to ','.
func detectDelimiter(head []byte) rune {
	var comma, semi, tab int
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		switch c {
		case '\n':
			goto done
		case ',':
			comma++
		case ';':
			semi++
		case '\t':
			tab++
		}
	}
done:
	switch {
	case semi > comma && semi >= tab:
		return ';'
	case tab > comma && tab > semi:
		return '\t'
	}
	return ','
}

// resolve maps the columns opts refers to onto header positions.
func (rd *Reader) resolve(opts Options, line int) error {
	index := make(map[string]int, len(rd.header))
	for i, h := range rd.header {
		key := strings.ToLower(strings.TrimSpace(h))
		if key == "" {
			continue // unnamed columns (trailing delimiters) can't be referred to
		}
		if j, dup := index[key]; dup {
			return fmt.Errorf("%s:%d: %w %q (columns %d and %d)", rd.file, line, ErrDuplicateColumn, strings.TrimSpace(h), j+1, i+1)
		}
		index[key] = i
	}
	lookup := func(name string) (int, bool) {
		i, ok := index[strings.ToLower(strings.TrimSpace(name))]
		return i, ok
	}
	headerList := strings.Join(rd.header, ", ")

	rd.userCol = -1
	if name := opts.UserIDColumn; name != "" {
		i, ok := lookup(name)
		if !ok {
			return fmt.Errorf("%s:%d: %w %q named with --user-id-column (header: %s)", rd.file, line, ErrUnknownColumn, name, headerList)
		}
		rd.userCol = i
	} else {
		for _, name := range userIDColumns {
			if i, ok := index[name]; ok {
				rd.userCol = i
				break
			}
		}
	}
	rd.needed = rd.userCol + 1

	phone, err := PickPhoneColumn(rd.header, opts.PhoneColumn)
	switch {
	case err != nil && opts.PhoneColumn == "" && rd.userCol >= 0:
		// A list of people known only by their user ids.
		phone, err = PhoneColumn{Index: -1}, nil
	case err != nil:
		return fmt.Errorf("%s:%d: %w (header: %s)", rd.file, line, err, headerList)
	case phone.Index == rd.userCol:
		return fmt.Errorf("%s:%d: column %q is both the phone and the user id column", rd.file, line, phone.Name)
	}
	rd.phone, rd.phoneCol = phone, phone.Index
	rd.needed = max(rd.needed, rd.phoneCol+1)

	for n, p := range opts.Params {
		i, ok := lookup(p)
		if !ok {
			return fmt.Errorf("%s:%d: %w %q in params (header: %s)", rd.file, line, ErrUnknownColumn, p, headerList)
		}
		rd.paramCols = append(rd.paramCols, i)
		what := fmt.Sprintf("parameter {{%d}}", n+1)
		if opts.NamedParams {
			what = fmt.Sprintf("parameter {{%s}}", strings.TrimSpace(p))
		}
		rd.paramWhat = append(rd.paramWhat, what)
		rd.needed = max(rd.needed, i+1)
	}

	rd.tzCol = -1
	for _, name := range tzColumns {
		if i, ok := index[name]; ok {
			rd.tzCol = i
			break
		}
	}

	rd.headerCol = -1
	if h := opts.Header; h != nil {
		i, ok := lookup(h.Column)
		if !ok {
			return fmt.Errorf("%s:%d: %w %q in %s header parameter (header: %s)", rd.file, line, ErrUnknownColumn, h.Column, h.Type, headerList)
		}
		rd.headerTyp, rd.headerCol = h.Type, i
		rd.needed = max(rd.needed, i+1)
	}
	for _, b := range opts.Buttons {
		i, ok := lookup(b.Column)
		if !ok {
			return fmt.Errorf("%s:%d: %w %q in URL button %d parameter (header: %s)", rd.file, line, ErrUnknownColumn, b.Column, b.Index, headerList)
		}
		rd.buttons = append(rd.buttons, b)
		rd.buttonCol = append(rd.buttonCol, i)
		rd.needed = max(rd.needed, i+1)
	}

	if opts.Text != "" {
		last := 0
		for _, m := range placeholder.FindAllStringSubmatchIndex(opts.Text, -1) {
			name := opts.Text[m[2]:m[3]]
			i, ok := lookup(name)
			if !ok {
				return fmt.Errorf("%s:%d: %w %q in text placeholder %s (header: %s)", rd.file, line, ErrUnknownColumn, name, opts.Text[m[0]:m[1]], headerList)
			}
			if m[0] > last {
				rd.text = append(rd.text, segment{lit: opts.Text[last:m[0]], col: -1})
			}
			rd.text = append(rd.text, segment{col: i})
			rd.needed = max(rd.needed, i+1)
			last = m[1]
		}
		if last < len(opts.Text) {
			rd.text = append(rd.text, segment{lit: opts.Text[last:], col: -1})
		}
		for _, s := range rd.text {
			rd.textLit += len(s.lit)
		}
	}
	return nil
}

// Next returns the next usable row, or io.EOF after the last one. A record
// that cannot be used comes back as a *RowError (use errors.As), and the
// caller may call Next again. Any other error is fatal: the rest of the
// file cannot be trusted (broken quoting, invalid UTF-8, a read error).
func (rd *Reader) Next() (Row, error) {
	rec, line, err := rd.record()
	if err != nil {
		return Row{}, err
	}
	row, err := rd.row(rec, line)
	if err == nil {
		rd.markDuplicate(&row)
	}
	return row, err
}

// record returns the next record that is not blank, and its line. The
// slice is overwritten by the next call. Errors are fatal, as for Next.
func (rd *Reader) record() ([]string, int, error) {
	for {
		rd.budget.n = 0
		rec, err := rd.csv.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, 0, io.EOF
			}
			return nil, 0, rd.fatal(err)
		}
		line, _ := rd.csv.FieldPos(0)
		if err := rd.checkUTF8(rec, line); err != nil {
			return nil, 0, err
		}
		// Spreadsheets export empty rows as ",,,"; they are not recipients.
		if allBlank(rec) {
			continue
		}
		return rec, line, nil
	}
}

// markDuplicate sets row.DuplicateOf when FindDuplicates is on. Rows must
// come to it in file order.
func (rd *Reader) markDuplicate(row *Row) {
	if rd.seen == nil {
		return
	}
	if first, dup := rd.seen.Add(row.Phone, row.Line); dup {
		row.DuplicateOf = first
	}
}

func (rd *Reader) row(rec []string, line int) (Row, error) {
	if len(rec) < rd.needed || (len(rec) > len(rd.header) && !allBlank(rec[len(rd.header):])) {
		// Too many fields usually means an unquoted delimiter inside a
		// value: every later value would be in the wrong column.
		return Row{}, &RowError{File: rd.file, Line: line,
			Reason: fmt.Sprintf("has %s, header has %d", plural(len(rec), "field"), len(rd.header))}
	}

	for i, v := range rec {
		if len(v) > MaxField {
			return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(i), Value: strings.ToValidUTF8(v[:40], "") + "…",
				Reason: fmt.Sprintf("field of %d bytes, over the %d KiB limit", len(v), MaxField>>10)}
		}
	}
	row, rerr := rd.recipient(rec, line)
	if rerr != nil {
		return Row{}, rerr
	}
	if rd.tzCol >= 0 && rd.tzCol < len(rec) {
		row.TZ = strings.TrimSpace(rec[rd.tzCol])
	}

	if len(rd.paramCols) > 0 {
		row.Params = make([]string, len(rd.paramCols))
		for n, c := range rd.paramCols {
			v := strings.TrimSpace(rec[c])
			if reason := checkText(v, rd.paramWhat[n], MaxBodyParamLen); reason != "" {
				return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(c), Value: v, Reason: reason}
			}
			row.Params[n] = v
		}
	}

	if rd.headerCol >= 0 {
		v := strings.TrimSpace(rec[rd.headerCol])
		var reason string
		if rd.headerTyp.Media() {
			reason = checkMedia(v, string(rd.headerTyp))
		} else {
			reason = checkText(v, "header parameter", MaxHeaderTextLen)
		}
		if reason != "" {
			return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.headerCol), Value: v, Reason: reason}
		}
		row.Header = v
	}

	if len(rd.buttons) > 0 {
		row.Buttons = make([]string, len(rd.buttons))
		for n, c := range rd.buttonCol {
			v := strings.TrimSpace(rec[c])
			if reason := checkText(v, fmt.Sprintf("URL button %d parameter", rd.buttons[n].Index), MaxButtonURLLen); reason != "" {
				return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(c), Value: v, Reason: reason}
			}
			row.Buttons[n] = v
		}
	}

	if rd.text != nil {
		body, rerr := rd.render(rec, line)
		if rerr != nil {
			return Row{}, rerr
		}
		row.Body = body
	}
	return row, nil
}

// recipient reads who a record is for: the phone column's number, or a
// business-scoped user id (in the phone column, or the user id column).
// A record with both is sent to the phone and keeps the user id.
func (rd *Reader) recipient(rec []string, line int) (Row, *RowError) {
	row := Row{Line: line}
	if rd.userCol >= 0 {
		if v := strings.TrimSpace(rec[rd.userCol]); v != "" {
			if why := campaign.CheckBSUID(v); why != "" {
				return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.userCol), Value: v, Reason: why, Err: ErrUserID}
			}
			row.UserID = v
		}
	}
	var input string
	if rd.phoneCol >= 0 {
		input = strings.TrimSpace(rec[rd.phoneCol])
	}
	switch {
	case input == "" && row.UserID != "":
		row.Input, row.Phone = row.UserID, row.UserID
		return row, nil
	case rd.phoneCol < 0:
		return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.userCol), Reason: "empty: no user id (and the file has no phone column)", Err: ErrEmpty}
	case campaign.LooksLikeBSUID(input):
		if why := campaign.CheckBSUID(input); why != "" {
			return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.phoneCol), Value: input, Reason: why, Err: ErrUserID}
		}
		if row.UserID != "" && row.UserID != input {
			return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.userCol), Value: row.UserID,
				Reason: fmt.Sprintf("differs from the user id %s in column %s", input, rd.colName(rd.phoneCol)), Err: ErrUserID}
		}
		row.Input, row.Phone, row.UserID = input, input, input
		return row, nil
	}
	phone, err := normalizePhone(input, rd.region, rd.regionCC)
	if err != nil {
		return Row{}, &RowError{File: rd.file, Line: line, Column: rd.colName(rd.phoneCol), Value: input, Reason: err.Error(), Err: err}
	}
	row.Input, row.Phone = input, phone
	return row, nil
}

// UserIDColumn is the column business-scoped user ids are read from, ""
// when the file has none.
func (rd *Reader) UserIDColumn() string {
	if rd.userCol < 0 {
		return ""
	}
	return rd.colName(rd.userCol)
}

// checkParam returns why v cannot be a template parameter, or "". The Cloud
// API rejects parameters with line breaks, tabs or more than four spaces in
// a row (error 132018); catching that here names the line to fix.
func checkParam(v string) string {
	switch {
	case v == "":
		return "missing"
	case strings.ContainsAny(v, "\n\r\t"):
		return "line break or tab in"
	case strings.Contains(v, "     "):
		return "more than 4 spaces in a row in"
	}
	return ""
}

// checkText returns why v cannot be the text parameter what, or "".
func checkText(v, what string, limit int) string {
	if reason := checkParam(v); reason != "" {
		return reason + " " + what
	}
	if n := utf8.RuneCountInString(v); n > limit {
		return fmt.Sprintf("%s is %d characters, limit is %d", what, n, limit)
	}
	return ""
}

// checkMedia returns why v cannot be the media header of type kind, or "".
// A value starting with http:// or https:// is a link, anything else the id
// of uploaded media; neither has room for spaces.
func checkMedia(v, kind string) string {
	if v == "" {
		return fmt.Sprintf("missing header %s link or id", kind)
	}
	if strings.ContainsAny(v, " \t\r\n") {
		return fmt.Sprintf("space or line break in header %s link or id", kind)
	}
	if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
		if u, err := url.Parse(v); err != nil || u.Host == "" {
			return fmt.Sprintf("header %s link is not a valid URL", kind)
		}
	}
	return ""
}

func (rd *Reader) render(rec []string, line int) (string, *RowError) {
	var b strings.Builder
	b.Grow(rd.textLit + 16*len(rd.text))
	for _, s := range rd.text {
		if s.col < 0 {
			b.WriteString(s.lit)
			continue
		}
		v := strings.TrimSpace(rec[s.col])
		if v == "" {
			return "", &RowError{File: rd.file, Line: line, Column: rd.colName(s.col),
				Reason: fmt.Sprintf("empty, needed for {{%s}} in text", rd.colName(s.col))}
		}
		b.WriteString(v)
	}
	body := b.String()
	if n := utf8.RuneCountInString(body); n > MaxTextLen {
		return "", &RowError{File: rd.file, Line: line,
			Reason: fmt.Sprintf("message is %d characters, limit is %d", n, MaxTextLen)}
	}
	return body, nil
}

// PhoneColumn is the column the numbers are read from, and the header's
// other phone-like columns.
func (rd *Reader) PhoneColumn() PhoneColumn {
	c := rd.phone
	c.UserIDs = rd.UserIDColumn()
	return c
}

func (rd *Reader) colName(i int) string { return strings.TrimSpace(rd.header[i]) }

// checkUTF8 rejects the whole file at the first bad byte: a file in another
// encoding would otherwise send garbled names to every recipient.
func (rd *Reader) checkUTF8(rec []string, line int) error {
	for i, f := range rec {
		if !utf8.ValidString(f) {
			col := strconv.Itoa(i + 1)
			if i < len(rd.header) && rd.header[i] != "" && utf8.ValidString(rd.header[i]) {
				col = rd.colName(i)
			}
			return fmt.Errorf("%s:%d: column %s: %w: save the file as CSV UTF-8", rd.file, line, col, ErrEncoding)
		}
	}
	return nil
}

// fatal describes a CSV syntax error with its position and what was
// expected instead.
func (rd *Reader) fatal(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", rd.file, err)
	}
	var hint string
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		hint = `: a value containing " must be quoted, with each " inside written as ""`
	case errors.Is(pe.Err, csv.ErrQuote):
		hint = `: expected a closing " followed by a delimiter or end of line`
	}
	if pe.StartLine != pe.Line {
		hint += fmt.Sprintf(" (the record starts on line %d)", pe.StartLine)
	}
	return fmt.Errorf("%s:%d:%d: %w%s", rd.file, pe.Line, pe.Column, pe.Err, hint)
}

func allBlank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
