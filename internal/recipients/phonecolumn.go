package recipients

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// PhoneColumn is the column a recipient file's numbers are read from, and
// the other phone-like columns its header has: an operator who sees
// `"Phone" (also phone-like, not used: "Mobile Phone")` knows the file was
// read from the landline column before anyone is messaged.
type PhoneColumn struct {
	Name   string   // as written in the header, without surrounding spaces
	Index  int      // its position in the header, from 0
	Named  bool     // given by Options.PhoneColumn (--phone-column), not picked
	Unused []string // the header's other phone-like columns, in header order
	// UserIDs is the column business-scoped user ids are read from, ""
	// when the file has none.
	UserIDs string
}

// String is the column and the phone-like ones not used, as every command
// shows it after "phone column: ".
func (c PhoneColumn) String() string {
	if c.Index < 0 {
		return "none (user ids only, from " + strconv.Quote(c.UserIDs) + ")"
	}
	s := strconv.Quote(c.Name)
	var notes []string
	if c.Named {
		notes = append(notes, "named with --phone-column")
	}
	if len(c.Unused) > 0 {
		q := make([]string, len(c.Unused))
		for i, u := range c.Unused {
			q[i] = strconv.Quote(u)
		}
		notes = append(notes, "also phone-like, not used: "+strings.Join(q, ", "))
	}
	if c.UserIDs != "" {
		notes = append(notes, "user ids from "+strconv.Quote(c.UserIDs))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// The phone column is picked by what its header says, not by a list of
// exact names: CRM exports qualify the word ("Mobile Phone Number",
// "Person - Phone - Mobile", "Telefon geschäftlich", "Téléphone
// portable"). A header is phone-like when, once folded (case, accents and
// punctuation ignored), every word in it is a phone word or a qualifier,
// and one is a phone word; any other word ("Phone Type", "Phone Ext",
// "Business Fax", "Order Number") makes it something else. Among
// phone-like columns the best kind wins — a WhatsApp column, then a
// mobile, then any phone, then a bare "number" — then one no qualifier
// says is a home or work line, then the leftmost.

// phoneKind ranks phone-like columns, best first.
type phoneKind int

const (
	kindWhatsApp phoneKind = iota // names the number to message on WhatsApp
	kindMobile                    // a mobile: the line WhatsApp is on, mostly
	kindPhone                     // a phone of unknown kind, or a landline
	kindNumber                    // a bare "number": the weakest hint
	notPhone
)

// phoneWords name a phone, folded, with the kind each says. Compounds
// are listed whole, as German and file headers write them ("Handynummer",
// "mobilephone").
var phoneWords = map[string]phoneKind{
	"whatsapp": kindWhatsApp, "whatsappnumber": kindWhatsApp, "whatsappnummer": kindWhatsApp,

	"mobile": kindMobile, "mobilephone": kindMobile, "mobileno": kindMobile, "mobilenumber": kindMobile,
	"cell": kindMobile, "cellphone": kindMobile, "cellular": kindMobile, "cellnumber": kindMobile,
	"msisdn": kindMobile, "gsm": kindMobile,
	"mobil": kindMobile, "mobiltelefon": kindMobile, "mobilnummer": kindMobile, "mobilfunk": kindMobile,
	"mobilfunknummer": kindMobile, "handy": kindMobile, "handynummer": kindMobile, "handynr": kindMobile, // German
	"portable": kindMobile,                                               // French
	"celular":  kindMobile, "movil": kindMobile, "telemovel": kindMobile, // Spanish, Portuguese
	"cellulare": kindMobile, "mobiel": kindMobile, "mobielnummer": kindMobile, // Italian, Dutch

	"phone": kindPhone, "phonenumber": kindPhone, "phoneno": kindPhone, "telephone": kindPhone, "tel": kindPhone,
	"landline": kindPhone,
	"telefon":  kindPhone, "telefonnummer": kindPhone, "telefonnr": kindPhone, "rufnummer": kindPhone, "festnetz": kindPhone,
	"telefono": kindPhone, "telefone": kindPhone, "telefoon": kindPhone, "telefoonnummer": kindPhone,
}

// plainWords may qualify a phone word without saying what line it is.
// Digits ("Phone 1 - Value", Google Contacts) are plain too.
var plainWords = words("number no nr num nummer numero value primary main principal default preferred contact person " +
	"customer client kunde cliente de di do da del du des van e164 international intl")

// lineWords say a phone is a home, work or other secondary line: such a
// column comes after a plain one of the same kind.
var lineWords = words("home private privat personal work business office company geschaftlich dienstlich buro " +
	"bureau domicile travail casa trabajo particular comercial other andere autre otro outro secondary " +
	"alternative alt assistant car landline festnetz fijo fixo fixe vaste")

// wholeNames are phone-like headers that are not made of the words above.
var wholeNames = map[string]phoneKind{"wa id": kindWhatsApp, "whatsapp id": kindWhatsApp, "number": kindNumber}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// foldHeader is a header name with case, accents and punctuation folded
// away: "Téléphone  portable", "TELEPHONE_PORTABLE" and "téléphone-portable"
// are all "telephone portable".
func foldHeader(name string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // the accent of a decomposed letter
		case r == 'ß':
			b.WriteString("ss")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
			continue
		}
		space = false
	}
	return b.String()
}

// phoneRank is how good a phone column a header names: its kind, and
// whether a qualifier makes it a secondary line; notPhone when it is not
// phone-like.
func phoneRank(name string) (kind phoneKind, secondary bool) {
	folded := foldHeader(name)
	if k, ok := wholeNames[folded]; ok {
		return k, false
	}
	kind = notPhone
	for _, w := range strings.Fields(folded) {
		k, isPhone := phoneWords[w]
		switch {
		case isPhone:
			kind = min(kind, k)
		case plainWords[w] || isDigits(w):
		case lineWords[w]:
		default:
			return notPhone, false // "Phone Type", "Order Number"
		}
		secondary = secondary || lineWords[w]
	}
	return kind, secondary
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// PhoneLike reports whether a header name reads as a phone column.
func PhoneLike(name string) bool {
	k, _ := phoneRank(name)
	return k != notPhone
}

// errNoPhoneLike is the end of the message for a header with no
// phone-like column.
var errNoPhoneLike = errors.New("expected a column named like Phone, Mobile Phone, Cell, WhatsApp, msisdn, wa_id, " +
	"Telefon, Handy, Mobilnummer, Téléphone portable, Celular, Móvil or Telefone, or name it with --phone-column")

// PickPhoneColumn chooses the column of header the numbers are read from:
// named (matched ignoring case and surrounding spaces) when it is not
// "", else the best phone-like column. Either way the other phone-like
// columns are listed as unused. The error wraps ErrNoPhoneColumn.
func PickPhoneColumn(header []string, named string) (PhoneColumn, error) {
	best := PhoneColumn{Index: -1}
	if named != "" {
		key := strings.ToLower(strings.TrimSpace(named))
		for i, h := range header {
			if strings.ToLower(strings.TrimSpace(h)) == key {
				best = PhoneColumn{Name: strings.TrimSpace(h), Index: i, Named: true}
				break
			}
		}
		if best.Index < 0 {
			return best, fmt.Errorf("%w: no column %q", ErrNoPhoneColumn, named)
		}
	} else {
		bestKind, bestSecondary := notPhone, false
		for i, h := range header {
			k, sec := phoneRank(h)
			if k < bestKind || (k == bestKind && k != notPhone && bestSecondary && !sec) {
				best = PhoneColumn{Name: strings.TrimSpace(h), Index: i}
				bestKind, bestSecondary = k, sec
			}
		}
		if best.Index < 0 {
			return best, fmt.Errorf("%w: %w", ErrNoPhoneColumn, errNoPhoneLike)
		}
	}
	for i, h := range header {
		if i != best.Index && PhoneLike(h) {
			best.Unused = append(best.Unused, strings.TrimSpace(h))
		}
	}
	return best, nil
}
