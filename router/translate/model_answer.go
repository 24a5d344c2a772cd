package translate

// Finish is how an answer stopped, in neutral words. Each API's words for
// it are in finishWords, the one table every codec and docs/translation.md
// read.
type Finish uint8

const (
	// FinishNone: the upstream has not said (yet).
	FinishNone Finish = iota
	// FinishStop is the natural end of a turn.
	FinishStop
	// FinishStopSequence is a stop sequence matched (Reply.StopSequence).
	FinishStopSequence
	// FinishLength is the output limit reached.
	FinishLength
	// FinishContextWindow is the model's context window filled.
	FinishContextWindow
	// FinishToolCalls is the model waiting for tool results.
	FinishToolCalls
	// FinishRefusal is the model declining (Messages' refusal).
	FinishRefusal
	// FinishContentFilter is a safety system stopping the answer
	// (OpenAI's content_filter, Gemini's SAFETY, a Bedrock guardrail).
	FinishContentFilter
	// FinishPause is a server-side tool loop paused (Messages' pause_turn).
	FinishPause
	// FinishMalformedCall is a tool call the model could not form.
	FinishMalformedCall
	// FinishOther is any other reason an upstream gives.
	FinishOther
)

// Reply is one unary answer.
type Reply struct {
	// ID and Model are string tokens (nil: the upstream gave none).
	ID, Model []byte
	// Created is the upstream's Unix time, 0 when it gave none.
	Created int64
	Parts   []Part
	Finish  Finish
	// StopSequence is the stop sequence matched, a string token.
	StopSequence []byte
	Usage        Usage
	// LatencyMs is the time the upstream says it took (Converse's
	// metrics.latencyMs), 0 when it does not say.
	LatencyMs int64
}

// EventKind is what a stream event says.
type EventKind uint8

const (
	// EventStart opens the answer: ID, Model, Created.
	EventStart EventKind = iota + 1
	// EventBlockStart opens content block Index: Part.Kind, and for a tool
	// call Part.ID and Part.Name.
	EventBlockStart
	// EventDelta adds to block Index: Part.Text (text, thinking, refusal),
	// Part.Args (a string token of an arguments fragment) or
	// Part.Signature (a thinking block's signature).
	EventDelta
	// EventBlockStop closes block Index after its last delta.
	EventBlockStop
	// EventUsage reports the usage so far (Usage, cumulative).
	EventUsage
	// EventFinish ends the answer: Finish, StopSequence.
	EventFinish
	// EventError ends the stream with the upstream's error: Err.
	EventError
)

// Event is one neutral stream event. Decoders append them to a slice the
// caller reuses, so an event costs no allocation.
type Event struct {
	Kind      EventKind
	Index     int
	Part      Part
	ID, Model []byte
	// Created is the upstream's Unix time on EventStart (0: none given).
	Created      int64
	Usage        Usage
	Finish       Finish
	StopSequence []byte
	Err          errorFields
}
