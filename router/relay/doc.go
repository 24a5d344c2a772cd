// Package relay holds what relaying an answer uses below the attempt: the
// bytes of the attempt's answer on their way to the client (Answer: a
// unary answer, an upstream error; Stream: an event stream read through
// its converter and relayed, chunk by chunk); the answer budget and the
// reads that hold a unary answer within it (Budget, Held); which headers
// cross the gateway each way (CopyRequestHeaders, CopyResponseHeaders,
// with the provider's request id and a scrub of its key) and the
// trace-context carrier; writes to a client that may stop reading
// (WriteDeadline, FlushingCopy, the stream buffers); and an upstream
// transport failure in the words a client reads (TransportReason). The
// attempt (package router) decides what is sent and when, and what a
// failure is; nothing here knows a route or a candidate.
package relay
