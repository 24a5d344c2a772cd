package translate

// PartKind is what a content part holds.
type PartKind uint8

const (
	// PartText is text: Text.
	PartText PartKind = iota + 1
	// PartImage is an image, inline (MediaType, Data) or by URL.
	PartImage
	// PartDocument is a document (a PDF), inline or by URL; Title may name it.
	PartDocument
	// PartToolCall is the model calling a tool: ID, Name, Args.
	PartToolCall
	// PartToolResult is a tool's answer to call ID: Content, IsError.
	PartToolResult
	// PartThinking is the model's reasoning: Text (may be empty) and the
	// Signature that lets the provider trust it on a later turn.
	PartThinking
	// PartRedactedThinking is reasoning the provider encrypted: Data.
	PartRedactedThinking
	// PartRefusal is the model declining to answer: Text.
	PartRefusal
)

// Part is one content part of a turn or an answer. Which members mean
// something depends on Kind; the others are nil.
type Part struct {
	Kind PartKind
	// Text is a string token: the text, refusal, thinking text or a tool
	// result given as plain text.
	Text []byte
	// MediaType and Data are an inline image or document: the media type
	// and the base64 bytes, each the contents of a JSON string without its
	// quotes (a data: URL's pieces are slices of the URL). DataEscaped is
	// true when they hold JSON escapes (an encoder must re-quote them).
	MediaType, Data []byte
	DataEscaped     bool
	// URL is an image or document by reference, a string token (an
	// http(s) URL, or Gemini's fileData.fileUri).
	URL []byte
	// Title names a document (a string token).
	Title []byte
	// Detail is an image's detail as OpenAI's APIs take it (low, high,
	// auto), a string token; the other APIs have no such setting.
	Detail []byte
	// ID is a tool call's id, or the call a result answers (a string token).
	ID []byte
	// Name is the tool called (a string token).
	Name []byte
	// Args are a tool call's arguments: a JSON object when ArgsQuoted is
	// false (Messages' input, Converse's input, Gemini's args), or a string
	// token holding one when true (OpenAI's arguments). Nil: no arguments.
	Args       []byte
	ArgsQuoted bool
	// Content is a tool result's content when it is not plain Text: text
	// and image parts.
	Content []Part
	// IsError marks a tool result that reports a failure.
	IsError bool
	// Signature is the provider's opaque proof of a thinking part (or, from
	// Gemini, of the part a thoughtSignature came on), a string token.
	Signature []byte
	// Cache is the part's cache mark, a raw cache_control object.
	Cache []byte
	// At is the part's position in its client message's content (-1: the
	// part is the message, as a Responses item or a string content is).
	At int
}

// hasArgs reports whether a tool call carries arguments other than none.
func (p *Part) hasArgs() bool { return present(p.Args) }
