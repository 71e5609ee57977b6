package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/wasend/wasend/internal/campaign"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// What inbound messages mean is configured by settings of the database
// (`wasend config set`): the keyword lists, the reply window and how long
// inbound messages are kept. InboundConfig is them read and checked.

// Setting keys, as `wasend config` names them.
const (
	SettingOptOutKeywords = "optout-keywords"
	SettingOptInKeywords  = "optin-keywords"
	SettingOptOutButtons  = "optout-buttons"
	SettingReplyWindow    = "reply-window"
	SettingRetention      = "inbound-retention"
)

// InboundSettings are the setting keys of inbound messages, in the order
// `wasend config` lists them.
var InboundSettings = []string{SettingOptOutKeywords, SettingOptInKeywords, SettingOptOutButtons, SettingReplyWindow, SettingRetention}

// Defaults: the main languages' words for stop and start. A keyword is
// matched against a message's whole text, so "stop" inside a sentence
// never suppresses anyone.
var (
	DefaultOptOutKeywords = []string{
		"STOP", "STOP ALL", "STOPALL", "UNSUBSCRIBE", "OPT OUT", "OPTOUT", // en
		"STOPP", "ABMELDEN", "ABBESTELLEN", // de
		"ARRÊT", "ARRÊTER", "DÉSABONNER", "DÉSINSCRIRE", // fr
		"BAJA", "PARAR", "DETENER", "CANCELAR SUSCRIPCIÓN", // es
		"SAIR", "DESCADASTRAR", // pt
		"BASTA", "DISISCRIVITI", // it
		"AFMELDEN",           // nl
		"СТОП", "ОТПИСАТЬСЯ", // ru
	}
	DefaultOptInKeywords = []string{
		"START", "UNSTOP", "SUBSCRIBE", "RESUME", // en
		"ANMELDEN",    // de
		"ABONNER",     // fr
		"ALTA",        // es
		"VOLTAR",      // pt
		"ISCRIVITI",   // it
		"AANMELDEN",   // nl
		"ПОДПИСАТЬСЯ", // ru
	}
	// DefaultOptOutButtons are the labels of Meta's marketing opt-out
	// button, which its payload carries in the template's language.
	DefaultOptOutButtons = []string{"Stop promotions", "Parar promoções", "Остановить рекламу"}
)

const (
	// DefaultReplyWindow is how long after our message an inbound message
	// from its recipient counts as a reply to it.
	DefaultReplyWindow = 72 * time.Hour
	// DefaultRetention is how long inbound messages are kept.
	DefaultRetention = 90 * 24 * time.Hour
	// maxKeyword bounds a keyword's length: a keyword is a word or two.
	maxKeyword = 64
)

// InboundConfig is what inbound messages mean: the keyword lists (each in
// its listed form), the reply window and the retention.
type InboundConfig struct {
	OptOut, OptIn, OptOutButtons []string
	ReplyWindow                  time.Duration
	Retention                    time.Duration

	optOut, optIn, buttons map[string]string // normalised → listed
}

// DefaultInbound is the configuration of a database that set none.
func DefaultInbound() InboundConfig {
	c, err := ParseInbound(nil)
	if err != nil {
		panic(err) // the defaults are constants: TestDefaultInbound holds them
	}
	return c
}

// ParseInbound reads the inbound settings a database holds (key → value;
// a key not set has its default) and checks them together: a keyword may
// not be on both the opt-out and the opt-in list.
func ParseInbound(settings map[string]string) (InboundConfig, error) {
	var (
		c   InboundConfig
		err error
	)
	list := func(key string, def []string) ([]string, map[string]string, error) {
		v, ok := settings[key]
		if !ok {
			v = strings.Join(def, "\n")
		}
		l, err := ParseKeywords(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", key, err)
		}
		m := make(map[string]string, len(l))
		for _, k := range l {
			m[NormalizeKeyword(k)] = k
		}
		return l, m, nil
	}
	if c.OptOut, c.optOut, err = list(SettingOptOutKeywords, DefaultOptOutKeywords); err != nil {
		return c, err
	}
	if c.OptIn, c.optIn, err = list(SettingOptInKeywords, DefaultOptInKeywords); err != nil {
		return c, err
	}
	if c.OptOutButtons, c.buttons, err = list(SettingOptOutButtons, DefaultOptOutButtons); err != nil {
		return c, err
	}
	for _, k := range c.OptIn {
		if out, ok := c.optOut[NormalizeKeyword(k)]; ok {
			return c, fmt.Errorf("%s: %q is also an opt-out keyword (%q): a keyword says one thing", SettingOptInKeywords, k, out)
		}
	}
	dur := func(key string, def time.Duration) (time.Duration, error) {
		v, ok := settings[key]
		if !ok {
			return def, nil
		}
		d, err := ParseDays(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		return d, nil
	}
	if c.ReplyWindow, err = dur(SettingReplyWindow, DefaultReplyWindow); err != nil {
		return c, err
	}
	if c.Retention, err = dur(SettingRetention, DefaultRetention); err != nil {
		return c, err
	}
	return c, nil
}

// ParseDays reads a positive duration: Go's form (72h, 90m) or whole days
// (30d).
func ParseDays(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var (
		d   time.Duration
		err error
	)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		var days int
		if _, err = fmt.Sscanf(n, "%d", &days); err == nil && fmt.Sprint(days) == n {
			d = time.Duration(days) * 24 * time.Hour
		} else {
			err = errors.New("want whole days")
		}
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (72h, 30d)", v)
	}
	return d, nil
}

// ParseKeywords reads a keyword list: one keyword a line, or several on a
// line separated by commas; blank lines and lines starting with # are
// skipped. "none" alone is the empty list. A keyword with control
// characters, without a letter or digit, longer than 64 characters, or
// listed twice (as NormalizeKeyword compares them) is refused with its
// line.
func ParseKeywords(text string) ([]string, error) {
	if strings.TrimSpace(text) == "none" {
		return []string{}, nil
	}
	var out []string
	seen := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, k := range strings.Split(line, ",") {
			k = strings.TrimSpace(k)
			switch {
			case k == "":
				return nil, fmt.Errorf("line %d: an empty keyword (two commas, or one at an end): %q", n, line)
			case strings.IndexFunc(k, unicode.IsControl) >= 0:
				return nil, fmt.Errorf("line %d: %q has a control character", n, k)
			case len([]rune(k)) > maxKeyword:
				return nil, fmt.Errorf("line %d: %q is longer than %d characters: a keyword is the whole message, a word or two", n, k, maxKeyword)
			case NormalizeKeyword(k) == "":
				return nil, fmt.Errorf("line %d: %q has no letter or digit", n, k)
			case strings.ContainsAny(k, `"`):
				return nil, fmt.Errorf("line %d: %q has a quote: write keywords bare, one a line or comma-separated", n, k)
			}
			key := NormalizeKeyword(k)
			if first, dup := seen[key]; dup {
				return nil, fmt.Errorf("line %d: %q is listed already on line %d", n, k, first)
			}
			seen[key] = n
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`no keyword: give one a line (or comma-separated), or "none" for an empty list`)
	}
	return out, nil
}

// NormalizeKeyword is how a message's text and a keyword are compared:
// trimmed of spaces and of punctuation and symbols at either end ("Stop!"),
// inner spaces made one, lower-cased, accents removed ("ARRÊT" is "arret").
func NormalizeKeyword(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	folded, _, err := transform.String(t, s)
	if err != nil {
		folded = s
	}
	folded = strings.TrimFunc(folded, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return strings.ToLower(strings.Join(strings.Fields(folded), " "))
}

// Inbound decides what one inbound message means: an opt-out when its
// whole text is an opt-out keyword, when it is Meta's marketing opt-out
// button, or when the person stopped marketing messages in the app; an
// opt-in for an opt-in keyword or a resume; an answer when the person
// wrote, tapped or reacted. An unknown message is an answer and nothing
// more.
func (c InboundConfig) Inbound(m campaign.InboundMessage) campaign.InboundMeaning {
	if m.Unknown {
		return campaign.InboundMeaning{Answers: m.Type != "user_preferences" && m.Type != "system"}
	}
	switch m.Type {
	case "user_preferences", "system":
		switch m.Payload {
		case "stop":
			return campaign.InboundMeaning{Kind: campaign.InboundOptOut, Reason: "stopped marketing messages in WhatsApp"}
		case "resume":
			return campaign.InboundMeaning{Kind: campaign.InboundOptIn, Reason: "resumed marketing messages in WhatsApp"}
		}
		return campaign.InboundMeaning{}
	case "button":
		if _, ok := c.buttons[NormalizeKeyword(m.Payload)]; ok {
			return campaign.InboundMeaning{Kind: campaign.InboundOptOut, Reason: "opt-out button", Answers: true}
		}
		if _, ok := c.buttons[NormalizeKeyword(m.Text)]; ok {
			return campaign.InboundMeaning{Kind: campaign.InboundOptOut, Reason: "opt-out button", Answers: true}
		}
	case "reaction":
		return campaign.InboundMeaning{Answers: true}
	}
	text := NormalizeKeyword(m.Text)
	if k, ok := c.optOut[text]; ok && text != "" {
		return campaign.InboundMeaning{Kind: campaign.InboundOptOut, Reason: fmt.Sprintf("keyword %q", k), Answers: true}
	}
	if k, ok := c.optIn[text]; ok && text != "" {
		return campaign.InboundMeaning{Kind: campaign.InboundOptIn, Reason: fmt.Sprintf("keyword %q", k), Answers: true}
	}
	return campaign.InboundMeaning{Answers: true}
}
