// Package preference reads and applies a request's provider preferences,
// as OpenRouter's clients write them (a "provider" object in the body, or
// the same JSON in the X-Firstbyte-Provider header): Parse checks them,
// and Deps applies them to a request's eligible candidates (filters that
// take targets out, a sort that replaces the mode's order, bounds and
// names that rearrange it). The router decides when to ask and writes
// the client's answer; this package knows no request or HTTP state.
package preference
