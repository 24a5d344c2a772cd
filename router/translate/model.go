package translate

// The neutral model: a chat request, an answer and a stream event in no
// API's words, a superset of what Chat Completions, Messages, Responses,
// Bedrock Converse and Gemini can say. Each API decodes into it once and
// encodes from it once (N + M codecs, not N × M converters), and what one
// side says survives to the other unless the other cannot say it: then the
// encoder refuses with a *RequestError naming the field.
//
// Every byte slice is a slice of the bytes decoded, never a copy: a text is
// its JSON string token as it came (quotes and escapes included), so a
// prompt of a megabyte crosses from one API to another as one append. A
// value is nil when the input did not give it.

// Role is who said a turn.
type Role uint8

const (
	// RoleUser is the caller's side: Chat's user and tool messages,
	// Messages' user turns, Gemini's "user", Converse's "user".
	RoleUser Role = iota + 1
	// RoleAssistant is the model's side (Gemini: "model").
	RoleAssistant
)

// Request is one chat request.
type Request struct {
	// Client is the API the request came in, whose field names a refusal
	// uses (turn and part positions are Turn.At and Part.At).
	Client Format
	// System is the system prompt's parts (text, each with its cache
	// mark), in the order the client gave them.
	System []Part
	// Developer is true when the system prompt came as developer messages
	// (OpenAI's newer name for them), which an OpenAI upstream gets back.
	Developer bool
	// Turns alternate as the client sent them; consecutive turns of one
	// role are kept apart here and merged by encoders whose API wants
	// them merged.
	Turns []Turn
	Tools []Tool
	// ToolChoice says whether and which tool the model must call.
	ToolChoice ToolChoice
	// ParallelToolCalls is false when the client forbade more than one
	// call per answer (nil: not said).
	ParallelToolCalls []byte
	// Output holds the answer's text to a JSON schema when set.
	Output OutputFormat
	Limits Limits
	// Reasoning is how much the model may think before answering.
	Reasoning Reasoning
	// User is an end-user id string token (Chat's user or
	// safety_identifier, Messages' metadata.user_id).
	User []byte
	// Stream asks for the answer as a stream; IncludeUsage also asks an
	// OpenAI stream for its usage chunk.
	Stream, IncludeUsage bool
	// parts is the array the turns' parts are runs of (Request.one, add):
	// one allocation a request, none when it comes from scratch.
	parts []Part
	// size is the length of the body decoded (0: built by hand), which
	// sizes an encoder's output: a translated request is about as long.
	size int
}

// Turn is one message: a role and its content parts.
type Turn struct {
	Role  Role
	Parts []Part
	// Cache is a cache mark on the whole turn (Chat's message-level
	// cache_control): it applies to the turn's last part.
	Cache []byte
	// At is the turn's position in the client's messages (or input) array.
	At int
}

// Limits are the sampling parameters and the output limit, each the raw
// JSON number token the client sent (nil: not sent).
type Limits struct {
	MaxTokens   []byte
	Temperature []byte
	TopP        []byte
	TopK        []byte
	// Stop is the stop sequences, each a string token.
	Stop [][]byte
}

// ToolChoiceMode is how the model may use the tools.
type ToolChoiceMode uint8

const (
	// ToolAuto lets the model decide (the default when tools are given).
	ToolAuto ToolChoiceMode = iota
	// ToolNone forbids calls while keeping the tools declared.
	ToolNone
	// ToolAny requires at least one call (Chat's "required").
	ToolAny
	// ToolNamed requires a call of ToolChoice.Name.
	ToolNamed
)

// ToolChoice is a request's tool choice.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the tool a ToolNamed choice forces, a string token.
	Name []byte
	// Said is true when the client gave a tool choice (auto said is
	// written back as auto; not said, left out).
	Said bool
}

// Tool is one function the model may call.
type Tool struct {
	// Name and Description are string tokens (Description nil: none).
	Name, Description []byte
	// Schema is the JSON schema object of the arguments, raw.
	Schema []byte
	// Strict is true when the client asked the arguments to be held to the
	// schema exactly (nil: not said).
	Strict []byte
	// Cache is the cache mark on the tool (Messages' cache_control).
	Cache []byte
}

// OutputFormat holds the answer's text to a JSON schema.
type OutputFormat struct {
	// Schema is the JSON schema object, raw; nil: free text.
	Schema []byte
	// Name is the schema's name string token (nil: none given), which
	// OpenAI requires and the others ignore.
	Name []byte
	// JSONObject asks for any JSON object, no schema (OpenAI's
	// json_object): only OpenAI and Gemini can hold an answer to it.
	JSONObject bool
}

// Reasoning is a request's thinking setting. Effort and Budget may both be
// given; an encoder uses the one its API speaks and derives it from the
// other through the effort table (effortBudgets) otherwise.
type Reasoning struct {
	// Effort is none, minimal, low, medium, high or xhigh ("" not said).
	Effort string
	// Budget is a thinking budget in tokens (0: not said).
	Budget int64
	// Off is true when the client turned thinking off explicitly.
	Off bool
	// Summary asks the reasoning summary back (Responses' summary; Gemini's
	// includeThoughts), and Encrypted the signatures (Responses' include
	// reasoning.encrypted_content).
	Summary, Encrypted bool
}
