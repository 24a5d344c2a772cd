package sim

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// Thinking across turns on the Converse and Gemini hosts. A request that
// asks the model to think (Gemini's generationConfig.thinkingConfig with a
// thinkingBudget above 0; Converse's
// additionalModelRequestFields.reasoningConfig of type enabled) gets an
// answer that carries signatures, as the real models' do: Gemini a
// thoughtSignature on the first functionCall part, or on the last text
// part of a text answer (and a thought part first when includeThoughts is
// set); Converse a reasoningContent block first, its reasoningText signed.
// The next turn must carry them back unchanged on the parts they came
// with: a signature the simulator did not give for that part is refused
// (400), and so is a Gemini thinking request whose last model turn's first
// call is unsigned, as Gemini 3 refuses it. The
// answer to a request that carried signatures back starts with a note of
// how many were verified (SignatureNote), so a test through a gateway can
// see that they arrived whole.

// geminiSkipSignature is the value Google documents for a history Gemini
// did not write: accepted in place of a signature, and not counted.
const geminiSkipSignature = "skip_thought_signature_validator"

// thoughtSignature is the signature the simulated model gives a part of
// kind (call, text, thought, reasoning) about name (a call's function;
// "" for the others): derived from both, so that a signature moved to
// another part, or altered, no longer verifies.
func thoughtSignature(kind, name string) string {
	sum := sha256.Sum256([]byte("firstbyte-sim thought|" + kind + "|" + name))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// SignatureNote is how the answer to a request that carried n (> 0) of
// the simulated model's thinking signatures back starts.
func SignatureNote(n int) string {
	return "[" + strconv.Itoa(n) + " thought signature(s) verified] "
}

// thoughtText is the text of the simulated model's thought part or
// reasoning block: fixed, as every answer's text is.
const thoughtText = "Thinking it over."
