package reqbody

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// A hedge sends a request a second time while the first is running. That
// is safe only when an answer is all a request makes: a request that also
// leaves state behind at its provider would leave it twice (two stored
// responses on two accounts, two background jobs), or depends on state
// only one account holds. Such a request is never hedged; it still fails
// over, one attempt at a time, as any other.
//
//   - chat completions: hedged, unless "store": true (the completion is
//     kept on the provider's account);
//   - messages, embeddings, count_tokens: hedged (nothing is kept);
//   - responses: hedged only with "store": false (the API stores a
//     response unless told not to), no "previous_response_id" and no
//     "background": true.

// SideEffect names the member of body, a request of api, that makes it
// more than an answer ("" : none, the request may be hedged).
func SideEffect(api API, body []byte) string {
	switch api {
	case ChatCompletions:
		if isTrue(jsonscan.Field(body, "store")) {
			return "store"
		}
	case Responses:
		switch {
		case !isFalse(jsonscan.Field(body, "store")):
			return "store"
		case isSet(jsonscan.Field(body, "previous_response_id")):
			return "previous_response_id"
		case isTrue(jsonscan.Field(body, "background")):
			return "background"
		}
	}
	return ""
}

// Stores reports whether body, a request of api, leaves its response
// stored at the provider: a Responses request, unless it says "store":
// false.
func Stores(api API, body []byte) bool {
	return api == Responses && !isFalse(jsonscan.Field(body, "store"))
}

// PreviousResponseID is the id of the stored response body, a request of
// api, continues ("" : none, or not a Responses request).
func PreviousResponseID(api API, body []byte) string {
	if api != Responses {
		return ""
	}
	v := jsonscan.Field(body, "previous_response_id")
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	return jsonscan.Unquote(v)
}

func isTrue(v []byte) bool  { return string(v) == "true" }
func isFalse(v []byte) bool { return string(v) == "false" }

// isSet reports whether a member is present and not null.
func isSet(v []byte) bool { return len(v) > 0 && string(v) != "null" }
