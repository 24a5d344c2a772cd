// Package relay holds what relaying an answer uses below the attempt: the
// answer budget and the reads that hold a unary answer within it (Budget,
// Held); which headers cross the gateway each way
// (CopyRequestHeaders, CopyResponseHeaders, with the provider's request id
// and a scrub of its key) and the trace-context carrier; writes to a
// client that may stop reading (WriteDeadline, FlushingCopy, the stream
// buffers); and an upstream transport failure in the words a client reads
// (TransportReason). The attempt and its relays (package router) decide
// what is sent and when; nothing here knows a route or a candidate.
package relay
