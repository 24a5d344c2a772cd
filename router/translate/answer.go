package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Answer says how an upstream's answer is presented to its client, for
// every answer translator, unary and streaming.
type Answer struct {
	// Model is the model name the answer reports: the upstream model the
	// request was sent as, or the name the client asked for.
	Model string
	// UpstreamModel makes the model the upstream's answer names win over
	// Model, when it names one: the model that answered is what
	// cost-tracking tools price by (a request for claude-sonnet-4-5 is
	// answered by claude-sonnet-4-5-20250929).
	UpstreamModel bool
	// Created is the `created` time (Unix seconds) of an answer whose
	// upstream gave none.
	Created int64
	// IncludeUsage adds, to an OpenAI chat stream, the usage-only chunk
	// the client asked for (stream_options.include_usage).
	IncludeUsage bool
	// IDs are the request's tool ids (nil: no request ids to keep apart).
	IDs *ToolIDs
}

// appendModel writes the model the answer reports, given the model member
// of the upstream's answer (nil when it had none).
func (a *Answer) appendModel(out, upstream []byte) []byte {
	if a.UpstreamModel && isString(upstream) && len(upstream) > 2 {
		return append(out, upstream...)
	}
	return jsonscan.AppendString(out, a.Model)
}
