package whatsapp

import (
	"encoding/json"
	"testing"
)

// successBody is the answer's shape for json.Unmarshal: the reference
// decodeSuccess must agree with.
type successBody struct {
	Contacts []struct {
		Input string `json:"input"`
		WaID  string `json:"wa_id"`
	} `json:"contacts"`
	Messages []struct {
		ID            string `json:"id"`
		MessageStatus string `json:"message_status"`
	} `json:"messages"`
}

// reference is what Send made of a 2xx body with json.Unmarshal.
func reference(data []byte) (Response, bool) {
	var ok successBody
	if err := json.Unmarshal(data, &ok); err != nil || len(ok.Messages) == 0 || ok.Messages[0].ID == "" {
		return Response{}, false
	}
	r := Response{WAMID: ok.Messages[0].ID, MessageStatus: ok.Messages[0].MessageStatus}
	if len(ok.Contacts) > 0 {
		r.WaID = ok.Contacts[0].WaID
	}
	return r, true
}

func decoded(data []byte) (Response, bool) {
	f, err := decodeSuccess(data)
	if err != nil || f.messages.n == 0 || f.id == "" {
		return Response{}, false
	}
	r := Response{WAMID: f.id, MessageStatus: f.status}
	if f.contacts.n > 0 {
		r.WaID = f.waID
	}
	return r, true
}

var successSeeds = []string{
	`{"messaging_product":"whatsapp","contacts":[{"input":"+4915112345678","wa_id":"4915112345678"}],"messages":[{"id":"wamid.HBgL","message_status":"accepted"}]}`,
	`{"messages":[{"id":"wamid.1"}]}`,
	` { "messages" : [ { "id" : "wamid.1" , "message_status" : "paused" } , {"id": "second"} ] , "contacts" : [ ] } `,
	`{"Messages":[{"ID":"upper"}],"CONTACTS":[{"WA_ID":"1"}]}`,
	`{"messages":[{"id":"a","message_status":"x"}],"messages":[{"id":"b"}]}`,
	`{"messages":[{"id":"a","message_status":"x"}],"messages":null,"messages":[{"id":"b"}]}`,
	`{"messages":[{"id":"a","message_status":"x"}],"messages":[],"messages":[{"id":"b"}]}`,
	`{"messages":[null]}`,
	`{"messages":[{"id":"a"}, 5]}`,
	`{"messages":[{"id":5}]}`,
	`{"messages":[{"id":null}]}`,
	`{"messages":{"id":"a"}}`,
	`{"messages":[{"id":"w\u0061mid\n\"x\"","message_status":"\ud83d\ude00"}]}`,
	`{"me\u0073sages":[{"id":"escaped key"}]}`,
	`{"meſſages":[{"id":"long s"}]}`,
	`{"messages":[{"id":"a","extra":{"nested":[1,2,{"x":"]"}],"n":-1.5e3,"t":true,"f":false}}],"error":null}`,
	`{"contacts":[{"wa_id":7}],"messages":[{"id":"a"}]}`,
	`{"contacts":[{"wa_id":"1"},{"wa_id":"2"}],"contacts":[null],"messages":[{"id":"a"}]}`,
	`{"messages":[{"id":"\xff\xfe"}]}`,
	`null`, `[]`, `"x"`, `{}`, `{"messages":[]}`, `{"messages":[{}]}`, `{"messages":[{"id":""}]}`,
	`{"messages":[{"id":"a"}]`, `{"messages":[{"id":"a"}]}}`, ``, `{"messages":[{"id":"a\x01"}]}`,
	// The usual answer's layout (decodeUsual), and near misses.
	`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.2"}]}` + "\n",
	`{"messaging_product":"whatsapp","contacts":[{"input":"+1","user_id":"US.1"}],"messages":[{"id":"wamid.4"}]}`,
	`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.5"}]}x`,
	`{"messaging_product":7,"contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.9","message_status":"paused"}]}`,
}

func TestDecodeSuccessMatchesUnmarshal(t *testing.T) {
	for _, s := range successSeeds {
		want, wantOK := reference([]byte(s))
		got, gotOK := decoded([]byte(s))
		if got != want || gotOK != wantOK {
			t.Errorf("%s:\ndecodeSuccess %+v, %v\njson.Unmarshal %+v, %v", s, got, gotOK, want, wantOK)
		}
	}
}

func FuzzDecodeSuccess(f *testing.F) {
	for _, s := range successSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantOK := reference(data)
		got, gotOK := decoded(data)
		if got != want || gotOK != wantOK {
			t.Errorf("%q:\ndecodeSuccess %+v, %v\njson.Unmarshal %+v, %v", data, got, gotOK, want, wantOK)
		}
	})
}

func BenchmarkDecodeSuccess(b *testing.B) {
	data := []byte(successSeeds[0])
	b.Run("decodeSuccess", func(b *testing.B) {
		for range b.N {
			decoded(data)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for range b.N {
			reference(data)
		}
	})
}

// TestDecodeUsual: the usual answer is read by decodeUsual, byte for byte
// as the Cloud API writes it; anything else is left to the full reader,
// which TestDecodeSuccessMatchesUnmarshal and the fuzz target hold to
// json.Unmarshal (the seeds include these).
func TestDecodeUsual(t *testing.T) {
	for _, tc := range []struct {
		body         string
		usual        bool
		id, st, waID string
	}{
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+4915112345678","wa_id":"4915112345678"}],"messages":[{"id":"wamid.HBgL","message_status":"accepted"}]}`,
			true, "wamid.HBgL", "accepted", "4915112345678"},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.2"}]}` + "\n",
			true, "wamid.2", "", "1"},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.3","message_status":"held_for_quality_assessment"}]} `,
			true, "wamid.3", "held_for_quality_assessment", "1"},
		// Not the usual layout: the full reader decides.
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","user_id":"US.1"}],"messages":[{"id":"wamid.4"}]}`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"w\u0061mid"}]}`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.5"}]}x`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.6"}],"extra":1}`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.7"}]`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.` + "\xff" + `"}]}`, false, "", "", ""},
		{`{"messaging_product":"whatsapp","contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.8"},{"id":"second"}]}`, false, "", "", ""},
		{`{"messaging_product":null,"contacts":[{"input":"+1","wa_id":"1"}],"messages":[{"id":"wamid.9"}]}`, false, "", "", ""},
	} {
		f, ok := decodeUsual([]byte(tc.body))
		if ok != tc.usual {
			t.Errorf("%s: usual %v, want %v", tc.body, ok, tc.usual)
			continue
		}
		if ok && (f.id != tc.id || f.status != tc.st || f.waID != tc.waID || f.messages.n != 1 || f.contacts.n != 1) {
			t.Errorf("%s: got %+v", tc.body, f)
		}
	}
}
