package translate

import "bytes"

// Thinking signatures are each provider's own: Anthropic (and Claude on
// Bedrock Converse) checks the signature of a thinking block it wrote,
// Gemini the thoughtSignature of a part it wrote, and neither reads the
// other's. A client of a mixed pool sends back whatever the last answer
// held, to whichever target serves the next turn, so the gateway marks the
// signatures Gemini gives before a client sees them, and each encoder sends
// a signature only to the provider that made it:
//
//   - "gemini~SIG" is the thoughtSignature of a Gemini thought part (the
//     thinking block it became);
//   - "gemini~next~SIG" is the thoughtSignature Gemini put on a
//     functionCall part: it becomes a thinking block of its own, with no
//     text, just before that part, and goes back on the part after it;
//   - "gemini~prev~SIG" is the thoughtSignature Gemini put on a text part
//     (mostly the answer's last): a thinking block of its own just after
//     the text (a stream's text block is not cut in two by it), which goes
//     back on the part before it.
//
// A thought Gemini gave no signature is marked too ("gemini~", nothing
// after it), so that no Gemini thinking block reaches Anthropic, which
// refuses a thinking block without its own signature.
//
// A signature without a mark is Anthropic's (or Converse's). Neither mark
// can begin a provider's own signature (base64 has no '~'), and '~' is rare
// enough in a request for a search of it to cost next to nothing
// (HasGeminiSignature).
var (
	geminiSigMark     = []byte("gemini~")
	geminiNextSigMark = []byte("gemini~next~")
	geminiPrevSigMark = []byte("gemini~prev~")
)

// sigOrigin is who made a thinking signature.
type sigOrigin uint8

const (
	sigNone       sigOrigin = iota // no signature
	sigAnthropic                   // not marked: Anthropic's or Converse's
	sigGemini                      // Gemini's, of the thought part itself
	sigGeminiNext                  // Gemini's, of the part after the thinking
	sigGeminiPrev                  // Gemini's, of the part before the thinking
)

// unsignedGeminiThought is the signature of a Gemini thought that came
// without one.
var unsignedGeminiThought = []byte(`"gemini~"`)

// originOf tells who made the signature string token sig.
func originOf(sig []byte) sigOrigin {
	switch {
	case !isString(sig) || len(sig) <= 2: // "" is no signature
		return sigNone
	case bytes.HasPrefix(sig[1:], geminiNextSigMark):
		return sigGeminiNext
	case bytes.HasPrefix(sig[1:], geminiPrevSigMark):
		return sigGeminiPrev
	case bytes.HasPrefix(sig[1:], geminiSigMark):
		return sigGemini
	}
	return sigAnthropic
}

// markSig is the string token sig with mark written after its opening
// quote.
func markSig(sig, mark []byte) []byte {
	out := make([]byte, 0, len(sig)+len(mark))
	out = append(append(append(out, '"'), mark...), sig[1:]...)
	return out
}

// geminiSig is a Gemini-marked signature token without its mark: the
// thoughtSignature Gemini gave.
func geminiSig(sig []byte) []byte {
	mark := geminiSigMark
	switch originOf(sig) {
	case sigGeminiNext:
		mark = geminiNextSigMark
	case sigGeminiPrev:
		mark = geminiPrevSigMark
	}
	out := make([]byte, 0, len(sig))
	return append(append(out, '"'), sig[1+len(mark):]...)
}

// geminiSigned splits a part Gemini answered with into the parts a client
// gets: a thought part keeps its signature, marked; a functionCall part's
// signature goes to a thinking part (no text) to go before it, marked to
// go back on the part after it; a text part's to one to go after it,
// marked to go back on the part before it (sig.Kind 0: none).
func geminiSigned(p Part) (sig, q Part) {
	if !isString(p.Signature) || p.Kind == 0 {
		p.Signature = nil
		return Part{}, p
	}
	if p.Kind == PartThinking {
		p.Signature = markSig(p.Signature, geminiSigMark)
		return Part{}, p
	}
	mark := geminiNextSigMark
	if p.Kind == PartText {
		mark = geminiPrevSigMark
	}
	sig = Part{Kind: PartThinking, Text: []byte(`""`), Signature: markSig(p.Signature, mark), At: -1}
	p.Signature = nil
	return sig, p
}
