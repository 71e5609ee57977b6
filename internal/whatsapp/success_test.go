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
