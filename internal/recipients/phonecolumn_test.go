package recipients

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPickPhoneColumn(t *testing.T) {
	tests := []struct {
		name   string
		header string // comma-separated
		named  string // Options.PhoneColumn
		want   string
		unused []string
	}{
		// The issue: a CRM export with a landline Phone and a Mobile Phone.
		{"HubSpot: mobile over phone", "First Name,Last Name,Phone Number,Mobile Phone Number,Email", "", "Mobile Phone Number", []string{"Phone Number"}},
		{"Salesforce: Mobile over Phone", "First Name,Last Name,Phone,Mobile,Email", "", "Mobile", []string{"Phone"}},
		{"Outlook: mobile among business and home", "Business Phone,Home Phone,Mobile Phone,Business Fax", "", "Mobile Phone", []string{"Business Phone", "Home Phone"}},
		{"Pipedrive", "Person - Name,Person - Phone - Work,Person - Phone - Mobile", "", "Person - Phone - Mobile", []string{"Person - Phone - Work"}},
		{"Cell", "Name,Phone,Cell", "", "Cell", []string{"Phone"}},
		{"Cell Phone", "Name,Cell Phone,Work Phone", "", "Cell Phone", []string{"Work Phone"}},
		{"German: Mobilnummer over Telefonnummer", "Vorname;Telefonnummer;Mobilnummer", "", "Mobilnummer", []string{"Telefonnummer"}},
		{"German: Handy over Telefon geschäftlich", "Name,Telefon geschäftlich,Handy", "", "Handy", []string{"Telefon geschäftlich"}},
		{"German Outlook: Mobiltelefon", "Vorname,Telefon (privat),Mobiltelefon", "", "Mobiltelefon", []string{"Telefon (privat)"}},
		{"French: Téléphone portable", "Prénom,Téléphone fixe,Téléphone portable", "", "Téléphone portable", []string{"Téléphone fixe"}},
		{"French: Portable", "Nom,Portable", "", "Portable", nil},
		{"Spanish: Móvil", "Nombre,Teléfono,Móvil", "", "Móvil", []string{"Teléfono"}},
		{"Portuguese: Celular over Telefone", "Nome,Telefone,Celular", "", "Celular", []string{"Telefone"}},
		{"Portuguese: Telemóvel", "Nome,Telemóvel", "", "Telemóvel", nil},
		{"WhatsApp over mobile", "Name,Mobile,WhatsApp", "", "WhatsApp", []string{"Mobile"}},
		{"WhatsApp Number", "Name,Phone,WhatsApp Number", "", "WhatsApp Number", []string{"Phone"}},
		{"wa_id over number", "wa_id,number", "", "wa_id", []string{"number"}},
		{"msisdn is a mobile", "id;Phone;MSISDN", "", "MSISDN", []string{"Phone"}},
		// Case, accents and spacing do not matter.
		{"upper case, underscores", "NAME,MOBILE_PHONE", "", "MOBILE_PHONE", nil},
		{"no accents", "Nom,Telephone Portable", "", "Telephone Portable", nil},
		{"extra spaces", " Name ,  Mobile   Phone  ", "", "Mobile   Phone", nil},
		{"camel compound", "name,MobilePhone", "", "MobilePhone", nil},
		// Among phones of one kind, a plain one over a home or work line,
		// then the leftmost.
		{"primary over business", "Business Phone,Primary Phone", "", "Primary Phone", []string{"Business Phone"}},
		{"leftmost of two plain", "Phone,Phone Number", "", "Phone", []string{"Phone Number"}},
		{"Google Contacts", "Name,Phone 1 - Type,Phone 1 - Value,Phone 2 - Type,Phone 2 - Value", "", "Phone 1 - Value", []string{"Phone 2 - Value"}},
		// A bare "number" is the weakest hint; a qualified one is no phone.
		{"phone over number", "number,phone,name", "", "phone", []string{"number"}},
		{"Order Number is not a phone", "Mobile Number,Order Number", "", "Mobile Number", nil},
		{"Kundennr is not a phone", "Kundennr,Festnetz,Name", "", "Festnetz", nil},
		// Words that make a phone-ish header something else.
		{"type, ext, fax, opt-in", "Phone Type,Phone Ext,Fax,Mobile Opt-In,Telefon", "", "Telefon", nil},
		// --phone-column wins, and the others are still listed.
		{"named wins", "Kundennr,Handynummer,Festnetz,Name", "handynummer", "Handynummer", []string{"Festnetz"}},
		{"named landline over mobile", "Phone,Mobile Phone", " PHONE ", "Phone", []string{"Mobile Phone"}},
		{"named non-phone column", "id,contact", "contact", "contact", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := strings.Split(tt.header, ",")
			if strings.Contains(tt.header, ";") {
				header = strings.Split(tt.header, ";")
			}
			got, err := PickPhoneColumn(header, tt.named)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want || strings.TrimSpace(header[got.Index]) != tt.want || !slices.Equal(got.Unused, tt.unused) {
				t.Errorf("PickPhoneColumn(%q, %q) = %q (index %d), unused %q; want %q, unused %q",
					header, tt.named, got.Name, got.Index, got.Unused, tt.want, tt.unused)
			}
			if got.Named != (tt.named != "") {
				t.Errorf("Named = %v, want %v", got.Named, tt.named != "")
			}
		})
	}
}

func TestPickPhoneColumnErrors(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		named  string
		want   string
	}{
		{"nothing phone-like", []string{"name", "email", "Phone Type", "Order Number", "Fax", ""},
			"", "no phone column: expected a column named like Phone, Mobile Phone, Cell, WhatsApp, msisdn, wa_id, Telefon, Handy, Mobilnummer, Téléphone portable, Celular, Móvil or Telefone, or name it with --phone-column"},
		{"named column missing", []string{"Name", "Mobile"}, "tel", `no phone column: no column "tel"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PickPhoneColumn(tt.header, tt.named)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNoPhoneColumn) {
				t.Errorf("error = %v, want %q wrapping ErrNoPhoneColumn", err, tt.want)
			}
		})
	}
}

func TestPhoneColumnString(t *testing.T) {
	tests := []struct {
		c    PhoneColumn
		want string
	}{
		{PhoneColumn{Name: "phone"}, `"phone"`},
		{PhoneColumn{Name: "Mobile Phone", Unused: []string{"Phone"}}, `"Mobile Phone" (also phone-like, not used: "Phone")`},
		{PhoneColumn{Name: "Handynummer", Named: true, Unused: []string{"Festnetz", "Telefon"}},
			`"Handynummer" (named with --phone-column; also phone-like, not used: "Festnetz", "Telefon")`},
		{PhoneColumn{Name: "contact", Named: true}, `"contact" (named with --phone-column)`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v.String() = %s, want %s", tt.c, got, tt.want)
		}
	}
}

func TestFoldHeader(t *testing.T) {
	for in, want := range map[string]string{
		"Téléphone portable":      "telephone portable",
		"  MOBILE_PHONE  ":        "mobile phone",
		"Telefon (geschäftlich)":  "telefon geschaftlich",
		"Person - Phone - Mobile": "person phone mobile",
		"Straße":                  "strasse",
		"Móvil":                   "movil",
		"wa_id":                   "wa id",
	} {
		if got := foldHeader(in); got != want {
			t.Errorf("foldHeader(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReaderPhoneColumn: the reader reads the picked column, and says so.
func TestReaderPhoneColumn(t *testing.T) {
	in := "Name,Phone,Mobile Phone\nLena,+49 30 1234567,+49 151 23456789\n"
	r, err := Open(strings.NewReader(in), "in.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.PhoneColumn().String(), `"Mobile Phone" (also phone-like, not used: "Phone")`; got != want {
		t.Errorf("PhoneColumn() = %s, want %s", got, want)
	}
	res := readAll(t, r)
	if len(res.rows) != 1 || res.rows[0].Phone != "+4915123456789" {
		t.Errorf("rows = %+v, want the mobile number", res.rows)
	}
}

// TestPhoneLikeKeepsEarlierNames: every name the picker's former list
// matched exactly is still found on its own.
func TestPhoneLikeKeepsEarlierNames(t *testing.T) {
	for _, name := range []string{"phone", "phone number", "mobile", "mobile number", "mobile phone", "msisdn", "wa_id",
		"whatsapp", "whatsapp number", "telefon", "teléfono", "telefono", "celular", "phone 1 - value", "number"} {
		got, err := PickPhoneColumn([]string{"Name", " " + strings.ToUpper(name) + " ", "Code"}, "")
		if err != nil || got.Index != 1 {
			t.Errorf("header with %q: picked %+v, %v; want column 2", name, got, err)
		}
	}
}
