// Package conn is what the gateway does on a client's connection, below
// the HTTP handlers: it guards a request's framing (GuardFraming, and
// FramingFault for the handler to refuse a request framed two ways) and
// writes the reason phrase of a status net/http has no text for
// (ReasonPhrases). Both work on the connection's bytes because net/http
// offers no other way; neither knows how a request is routed.
package conn
