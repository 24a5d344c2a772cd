// Package reqbody is a client request's body as the gateway reads it:
// one scan of the top-level object (Scan: the model, stream, and the
// members routing, the input checks and the prompt-cache affinity read),
// the input checks every provider would refuse (Check), the request's own
// output limit, and the two edits the gateway makes to a body it forwards
// as it came otherwise (WithModel, WithoutProvider). It never decodes a
// body into Go values whole, and knows no endpoint, route or HTTP state.
package reqbody
