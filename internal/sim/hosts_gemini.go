package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Gemini's generateContent and streamGenerateContent?alt=sse (the Gemini
// API with x-goog-api-key, and Gemini on Vertex with an OAuth token): the
// request has contents of parts with roles user and model,
// systemInstruction, generationConfig and tools; each stream event is a
// whole GenerateContentResponse, events ending in CRLF CRLF; a function
// call arrives whole; usageMetadata's promptTokenCount includes the cached
// tokens. Errors are Google's {"error":{"code","message","status"}}.

// geminiKnown are the generateContent request's members.
var geminiKnown = []string{"contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "cachedContent", "labels"}

type geminiPart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData json.RawMessage `json:"inlineData"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig struct {
		MaxOutputTokens int      `json:"maxOutputTokens"`
		StopSequences   []string `json:"stopSequences"`
		ThinkingConfig  struct {
			ThinkingBudget  *int `json:"thinkingBudget"`
			IncludeThoughts bool `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiFront reads a generateContent request into a Messages one; a body
// and how many of the model's thought signatures it carried back (checked
// by geminiSignatures), or the INVALID_ARGUMENT message.
func geminiFront(body []byte, model string, stream bool) ([]byte, int, string) {
	if k := unknownMember(body, geminiKnown...); k != "" {
		return nil, 0, fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
	}
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, 0, "Invalid JSON payload received: " + err.Error()
	}
	if len(in.Contents) == 0 {
		return nil, 0, "* GenerateContentRequest.contents: contents is not specified"
	}
	signed, refusal := geminiSignatures(&in)
	if refusal != "" {
		return nil, 0, refusal
	}
	var system strings.Builder
	if in.SystemInstruction != nil {
		for _, p := range in.SystemInstruction.Parts {
			if p.Text != nil {
				system.WriteString(*p.Text)
			}
		}
	}
	calls := map[string]int{} // a call without id: its name's count
	var msgs []map[string]any
	for _, c := range in.Contents {
		role := map[string]string{"user": "user", "model": "assistant", "": "user"}[c.Role]
		if role == "" {
			return nil, 0, fmt.Sprintf("Please use a valid role: user, model (not %q).", c.Role)
		}
		var blocks []modelPart
		for _, p := range c.Parts {
			switch {
			case p.Thought:
			case p.Text != nil:
				blocks = append(blocks, modelPart{"type": "text", "text": *p.Text})
			case p.FunctionCall != nil:
				id := geminiCallID(p.FunctionCall.ID, p.FunctionCall.Name, calls, true)
				args := p.FunctionCall.Args
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, modelPart{"type": "tool_use", "id": id, "name": p.FunctionCall.Name, "input": args})
			case p.FunctionResponse != nil:
				id := geminiCallID(p.FunctionResponse.ID, p.FunctionResponse.Name, calls, false)
				blocks = append(blocks, modelPart{"type": "tool_result", "tool_use_id": id, "content": string(p.FunctionResponse.Response)})
			case p.InlineData != nil:
				// An image block, counted by the answer as the plain API's.
				var d struct {
					MimeType string `json:"mimeType"`
					Data     string `json:"data"`
				}
				if json.Unmarshal(p.InlineData, &d) != nil || d.MimeType == "" || d.Data == "" {
					return nil, 0, "* GenerateContentRequest.contents.parts.inline_data: mimeType and data are required"
				}
				blocks = append(blocks, modelPart{"type": "image", "source": map[string]string{"type": "base64", "media_type": d.MimeType, "data": d.Data}})
			default:
				return nil, 0, "* GenerateContentRequest.contents.parts: a part must have data"
			}
		}
		msgs = append(msgs, map[string]any{"role": role, "content": blocks})
	}
	var tools []map[string]any
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if schema == nil {
				schema = f.Parameters
			}
			if schema == nil {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			tools = append(tools, map[string]any{"name": f.Name, "description": f.Description, "input_schema": schema})
		}
	}
	return messagesBody(model, stream, in.GenerationConfig.MaxOutputTokens, system.String(), msgs, tools, in.GenerationConfig.StopSequences), signed, ""
}

// geminiThinks reports whether a request asks the model to think (a
// thinkingBudget above 0).
func geminiThinks(in *geminiRequest) bool {
	b := in.GenerationConfig.ThinkingConfig.ThinkingBudget
	return b != nil && *b > 0
}

// geminiSignatures checks the thoughtSignatures of a request's model
// turns: each must be the one the simulated model gave that part (or
// Google's skip value, not counted), and when the request thinks, the
// first call of the last model turn must carry one, as Gemini 3 refuses a
// function call turn without it. It returns how many it verified, or the
// refusal.
func geminiSignatures(in *geminiRequest) (int, string) {
	n, lastModel := 0, -1
	for i, c := range in.Contents {
		if c.Role != "model" {
			continue
		}
		lastModel = i
		for _, p := range c.Parts {
			if p.ThoughtSignature == "" || p.ThoughtSignature == geminiSkipSignature {
				continue
			}
			kind, name := "text", ""
			switch {
			case p.FunctionCall != nil:
				kind, name = "call", p.FunctionCall.Name
			case p.Thought:
				kind = "thought"
			}
			if p.ThoughtSignature != thoughtSignature(kind, name) {
				return 0, "Unable to submit request because it has an invalid thought signature (contents[" + strconv.Itoa(i) + "], a " + kind + " part). Thought signatures must be sent back unchanged, on the part they came with."
			}
			n++
		}
	}
	if geminiThinks(in) && lastModel >= 0 {
		for _, p := range in.Contents[lastModel].Parts {
			if p.FunctionCall == nil {
				continue
			}
			if p.ThoughtSignature == "" {
				return 0, "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly (contents[" + strconv.Itoa(lastModel) + "])."
			}
			break // only the first call of a turn is signed
		}
	}
	return n, ""
}

// geminiCallID pairs calls and responses that carry no id, by name and
// order.
// geminiThoughts is how many tokens the model reports it thought
// (usageMetadata.thoughtsTokenCount, apart from candidatesTokenCount, as
// Gemini's): a request's thinkingConfig.thinkingBudget above 0 gets a
// tenth of it, at least 1; none or 0 (thinking off) gets none.
func geminiThoughts(body []byte) int {
	var in geminiRequest
	if json.Unmarshal(body, &in) != nil || in.GenerationConfig.ThinkingConfig.ThinkingBudget == nil {
		return 0
	}
	if b := *in.GenerationConfig.ThinkingConfig.ThinkingBudget; b > 0 {
		return max(1, b/10)
	}
	return 0
}

func geminiCallID(id, name string, calls map[string]int, call bool) string {
	if id != "" {
		return id
	}
	if call {
		calls[name]++
	}
	return fmt.Sprintf("gemini_%s_%d", name, calls[name])
}

// googleStatus is the status word of Google's errors for an HTTP status.
func googleStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// googleError writes Google's error body.
func googleError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, googleErrorBody(status, msg))
}

func googleErrorBody(status int, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": googleStatus(status)}}
}
