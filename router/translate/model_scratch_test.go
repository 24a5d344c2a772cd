package translate

import (
	"bytes"
	"sync"
	"testing"
)

// EncodeRequest decodes into pooled scratch: a request must translate as
// it does on a fresh Request whatever was translated before it, alone or
// at the same time as others, and the request it returns holds settings
// only.
func TestEncodeRequestScratchReuse(t *testing.T) {
	cases := []struct {
		from Format
		body []byte
		to   Format
	}{
		{Chat, chatRequest4K(), Messages},
		{Messages, messagesRequest4K(), Chat},
		{Responses, responsesRequest4K(), Chat},
		{Responses, responsesRequest4K(), Messages},
		{Chat, []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`), Messages},
		{Messages, []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`), Gemini},
		{Chat, chatRequest4K(), Converse},
	}
	want := make([][]byte, len(cases))
	for i, c := range cases {
		r, err := DecodeRequest(c.from, c.body) // a fresh Request, no scratch
		if err != nil {
			t.Fatal(err)
		}
		switch c.to {
		case Chat:
			want[i], err = EncodeChat(r, "up")
		case Messages:
			want[i], err = EncodeMessages(r, "up", nil)
		case Gemini:
			want[i], err = EncodeGemini(r)
		case Converse:
			want[i], err = EncodeConverse(r, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(i int) error {
		c := cases[i]
		out, r, err := EncodeRequest(c.from, c.body, c.to, "up", nil)
		switch {
		case err != nil:
			return err
		case !bytes.Equal(out, want[i]):
			t.Errorf("case %d after other requests:\n got %s\nwant %s", i, out, want[i])
		case r.Turns != nil || r.System != nil || r.Tools != nil || r.parts != nil:
			t.Errorf("case %d: the returned request holds content", i)
		}
		return nil
	}
	for round := 0; round < 3; round++ { // each case after each other one
		for i := range cases {
			if err := check(i); err != nil {
				t.Fatal(err)
			}
		}
		for i := len(cases) - 1; i >= 0; i-- {
			if err := check(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(cases))
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				if err := check((g + k) % len(cases)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A refused request leaves no content in the scratch the next one gets.
func TestEncodeRequestScratchAfterRefusal(t *testing.T) {
	bad := []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"secret"},{"type":"bogus"}]}]}`)
	if _, _, err := EncodeRequest(Messages, bad, Chat, "up", nil); err == nil {
		t.Fatal("a bogus block translated")
	}
	out, _, err := EncodeRequest(Messages, []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), Chat, "up", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("secret")) {
		t.Fatalf("a refused request's text reached the next one: %s", out)
	}
}
