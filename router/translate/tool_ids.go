package translate

import (
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// ToolIDs keeps one request's tool-call ids valid for whoever reads them
// and unique, across its translation and its answer's. Anthropic accepts
// only letters, digits, '_' and '-' in an id; OpenAI-compatible servers
// make ids of any shape (vLLM serving Kimi K2 says "functions.get_weather:0").
// An id that the reader would refuse is rewritten, '_' for each byte it
// would not take, and a rewrite that lands on an id the conversation
// already holds gets "_2", "_3", ... until it is unique: call.1 and call:1
// become call_1 and call_1_2, never one id for two calls. The same id is
// rewritten the same way everywhere in the request (a call and its
// result still match), and in the same way on every turn, since the
// history a client sends again holds the same ids in the same order.
//
// The request's translation and its answer's share one ToolIDs: an id
// the answer hands an Anthropic client is unique among the ids its
// conversation already holds, and an id the upstream answers with that
// the gateway made up on the way in is given back as the client wrote it.
//
// Most requests need none of this: an id already valid costs a byte
// check, and the maps exist only once one id is rewritten. The zero value
// is ready; a nil *ToolIDs rewrites without remembering (one id at a
// time, as the answer of a request that was not translated).
type ToolIDs struct {
	request []byte // the client's request, scanned for its ids on the first rewrite
	format  Format // request's format
	scanned bool

	taken map[string]bool   // every id the conversation holds or the gateway gave out
	out   map[string]string // id as written -> as rewritten
	back  map[string]string // as rewritten -> as written
}

// NewToolIDs is the ids of a client request of format f, body its body
// (kept, and read again only if an id must be rewritten).
func NewToolIDs(body []byte, f Format) *ToolIDs { return &ToolIDs{request: body, format: f} }

// anthropicIDByte reports whether c may stand in an Anthropic tool id.
func anthropicIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// validForAnthropic reports whether the contents of a string token (raw,
// escapes as written) are an id Anthropic accepts: an escape is a '\',
// which it does not.
func validForAnthropic(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		if !anthropicIDByte(c) {
			return false
		}
	}
	return true
}

// appendAnthropicID appends the string token id as an id Anthropic
// accepts: as it is when it is one, else rewritten (see ToolIDs). The
// token must be a non-empty string.
func (t *ToolIDs) appendAnthropicID(out, id []byte) []byte {
	raw := id[1 : len(id)-1]
	if validForAnthropic(raw) {
		return append(out, id...)
	}
	s := string(jsonscan.AppendUnquoted(nil, id))
	return jsonscan.AppendString(out, t.rewrite(s))
}

// rewrite gives the id s, which Anthropic would refuse, its rewritten
// form: the same one every time within the request, unique among the ids
// the conversation holds.
func (t *ToolIDs) rewrite(s string) string {
	base := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !anthropicIDByte(c) {
			c = '_'
		}
		base[i] = c
	}
	if t == nil {
		return string(base)
	}
	if r, ok := t.out[s]; ok {
		return r
	}
	t.scan()
	r := string(base)
	for n := 2; t.taken[r]; n++ {
		r = string(base) + "_" + strconv.Itoa(n)
	}
	t.taken[r] = true
	t.out[s], t.back[r] = r, s
	return r
}

// scan reads every tool id of the request into taken, once.
func (t *ToolIDs) scan() {
	if t.scanned {
		return
	}
	t.scanned = true
	t.taken, t.out, t.back = map[string]bool{}, map[string]string{}, map[string]string{}
	v, ok := jsonscan.Valid(t.request)
	if !ok {
		return
	}
	add := func(tok []byte) {
		if isString(tok) {
			t.taken[string(jsonscan.AppendUnquoted(nil, tok))] = true
		}
	}
	switch t.format {
	case Chat:
		for _, msg := range jsonscan.Each(jsonscan.Field(v, "messages")) {
			add(jsonscan.Field(msg, "tool_call_id"))
			for _, c := range jsonscan.Each(jsonscan.Field(msg, "tool_calls")) {
				add(jsonscan.Field(c, "id"))
			}
		}
	case Messages:
		for _, msg := range jsonscan.Each(jsonscan.Field(v, "messages")) {
			for _, b := range jsonscan.Each(jsonscan.Field(msg, "content")) {
				add(jsonscan.Field(b, "id"))
				add(jsonscan.Field(b, "tool_use_id"))
			}
		}
	case Responses:
		for _, item := range jsonscan.Each(jsonscan.Field(v, "input")) {
			add(jsonscan.Field(item, "call_id"))
		}
	}
}

// appendClientID appends an id the upstream answered with (a string token,
// or nil when it gave none: then fallback and n make one) as the client
// reads it: for an Anthropic client, valid for Anthropic and unique in the
// conversation; for another client, as the upstream wrote it, or as the
// client first wrote it when the gateway rewrote it on the way in.
//
// An id made up (Gemini and some OpenAI-compatible servers give none) is
// fallback and the first number from n on that no call of the conversation
// holds and the answer has not given out: call_0 on the first turn, call_1
// on the next, whose history holds call_0, so a client that keys results
// by id never sees one id for two calls.
func (t *ToolIDs) appendClientID(out, id []byte, client Format, fallback string, n int) []byte {
	if !isString(id) || len(id) == 2 {
		if t == nil {
			return appendID(out, nil, fallback, n)
		}
		t.scan()
		for ; ; n++ {
			if r := fallback + strconv.Itoa(n); !t.taken[r] {
				t.taken[r] = true
				return jsonscan.AppendString(out, r)
			}
		}
	}
	raw := id[1 : len(id)-1]
	if client == Messages {
		if validForAnthropic(raw) {
			if t != nil && t.taken != nil {
				t.taken[string(raw)] = true // a later rewrite in this answer must not land on it
			}
			return append(out, id...)
		}
		return jsonscan.AppendString(out, t.rewrite(string(jsonscan.AppendUnquoted(nil, id))))
	}
	if t != nil && t.back != nil {
		if orig, ok := t.back[string(raw)]; ok {
			return jsonscan.AppendString(out, orig)
		}
	}
	return append(out, id...)
}
