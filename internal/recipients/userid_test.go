package recipients

import (
	"errors"
	"reflect"
	"testing"
)

// Rows for people known by a business-scoped user id: the id is the
// recipient when there is no phone, the phone wins when there are both,
// and a bad id is reported with file, line, column and value.
func TestReaderUserIDs(t *testing.T) {
	type got struct {
		Line                 int
		Input, Phone, UserID string
	}
	tests := []struct {
		file    string
		opts    Options
		rows    []got
		rowErrs []string
		column  string // the reader's user id column
	}{
		{
			file: "user_ids.csv",
			rows: []got{
				{2, "+4915112345678", "+4915112345678", ""},
				{3, "US.13491208655302741918", "US.13491208655302741918", "US.13491208655302741918"},
				{4, "+4915112345679", "+4915112345679", "DE.ABC123"},
				{7, "US.ENT.11815799212886844830", "US.ENT.11815799212886844830", "US.ENT.11815799212886844830"},
			},
			rowErrs: []string{
				`user_ids.csv:5: column user_id: "us.123": user id: the country code must be two capital letters`,
				`user_ids.csv:6: column phone: empty`,
				`user_ids.csv:8: column phone: "US.12-3": user id: '-' is not a letter or digit`,
				`user_ids.csv:9: column user_id: "US.778": differs from the user id US.777 in column phone`,
			},
			column: "user_id",
		},
		{
			file: "user_ids_only.csv",
			rows: []got{
				{2, "US.1", "US.1", "US.1"},
				{4, "BR.9z", "BR.9z", "BR.9z"},
			},
			rowErrs: []string{`user_ids_only.csv:3: column bsuid: empty: no user id (and the file has no phone column)`},
			column:  "bsuid",
		},
		{
			file: "user_ids_named.csv",
			opts: Options{UserIDColumn: "customer key"},
			rows: []got{
				{2, "GB.42", "GB.42", "GB.42"},
				{3, "+447911123456", "+447911123456", ""},
			},
			column: "Customer Key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rd, err := openFixture(t, tt.file, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c := rd.UserIDColumn(); c != tt.column {
				t.Errorf("user id column %q, want %q", c, tt.column)
			}
			res := readAll(t, rd)
			if res.fatal != nil {
				t.Fatal(res.fatal)
			}
			var rows []got
			for _, r := range res.rows {
				rows = append(rows, got{r.Line, r.Input, r.Phone, r.UserID})
			}
			if !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("rows\n got %+v\nwant %+v", rows, tt.rows)
			}
			if !reflect.DeepEqual(res.rowErrMsg, tt.rowErrs) {
				t.Errorf("row errors\n got %q\nwant %q", res.rowErrMsg, tt.rowErrs)
			}
			for _, e := range res.rowErrs {
				if e.Column == "user_id" && !errors.Is(e, ErrUserID) {
					t.Errorf("%v does not wrap ErrUserID", e)
				}
			}
		})
	}
}

func TestReaderUserIDColumnErrors(t *testing.T) {
	if _, err := openFixture(t, "user_ids.csv", Options{UserIDColumn: "nope"}); !errors.Is(err, ErrUnknownColumn) {
		t.Errorf("unknown --user-id-column: %v", err)
	}
	if _, err := openFixture(t, "user_ids.csv", Options{UserIDColumn: "phone"}); err == nil {
		t.Error("the phone column named as the user id column too: no error")
	}
	// No phone column and no user id column: the old error.
	if _, err := openFixture(t, "no_phone_column.csv", Options{}); !errors.Is(err, ErrNoPhoneColumn) {
		t.Errorf("no phone column: %v", err)
	}
}
