// Package translate converts between the chat APIs the gateway speaks:
// OpenAI Chat Completions and Anthropic Messages both ways, and OpenAI
// Responses to either. It turns a request of one into a request of another,
// an upstream answer (unary body, error body or server-sent event stream)
// back into the client's format, and reads token usage from answers it
// relays untouched (naming the client's model in them when asked), so that
// one pool of targets can mix providers of both kinds for one model.
//
// A translation keeps the answer's meaning or refuses: a request the other
// API cannot express is a *RequestError naming the field, an upstream answer
// that breaks its API is ErrInvalidUpstream, never a silent drop. Tool ids
// are kept valid for whoever reads them (ToolIDs), and an answer names the
// model Answer says.
//
// Every function is pure: bytes in, bytes out. Streams are stateful values fed
// the upstream's bytes as they arrive, split anywhere, and they append the
// client's bytes to a caller's buffer; the caller decides when to flush.
// Parameters one API has and the other lacks are mapped, dropped or refused
// with a [*RequestError] exactly as docs/translation.md tables them.
//
// What it must not do: any I/O, logging, clock reading or randomness (a
// `created` timestamp is passed in); hold on to a caller's buffer after a call
// returns; or put prompt or completion text in an error value, which the
// gateway may log: errors name fields and positions, never their contents.
// Text the upstream wrote into its own error body is the exception that
// proves the rule: it is the client's answer and is carried to the client,
// never into a Go error.
//
// JSON is read, walked and quoted with the gateway's one JSON toolkit,
// router/internal/jsonscan, rather than encoding/json: a request or answer
// is mostly string bytes that cross over untouched, so the work is finding
// where each value starts and ends and copying its bytes, several times
// cheaper than decoding every string and encoding it again.
package translate
