package router

import (
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

	"github.com/firstbyte-dev/firstbyte/router/apierror"
)

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

// sideEffect names the member of c's request that makes it more than an
// answer ("" : none, the request may be hedged).
func (c *request) sideEffect() string {
	switch c.ep.family {
	case familyChat:
		if c.ep.shape == apierror.OpenAI && isTrue(jsonscan.Field(c.body, "store")) {
			return "store"
		}
	case familyResponses:
		switch {
		case !isFalse(jsonscan.Field(c.body, "store")):
			return "store"
		case isSet(jsonscan.Field(c.body, "previous_response_id")):
			return "previous_response_id"
		case isTrue(jsonscan.Field(c.body, "background")):
			return "background"
		}
	}
	return ""
}

func isTrue(v []byte) bool  { return string(v) == "true" }
func isFalse(v []byte) bool { return string(v) == "false" }

// isSet reports whether a member is present and not null.
func isSet(v []byte) bool { return len(v) > 0 && string(v) != "null" }
