package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
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
			ThinkingBudget *int `json:"thinkingBudget"`
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

// geminiFront reads a generateContent request into a Messages one; a body,
// or the INVALID_ARGUMENT message.
func geminiFront(body []byte, model string, stream bool) ([]byte, string) {
	if k := unknownMember(body, geminiKnown...); k != "" {
		return nil, fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
	}
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, "Invalid JSON payload received: " + err.Error()
	}
	if len(in.Contents) == 0 {
		return nil, "* GenerateContentRequest.contents: contents is not specified"
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
			return nil, fmt.Sprintf("Please use a valid role: user, model (not %q).", c.Role)
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
					return nil, "* GenerateContentRequest.contents.parts.inline_data: mimeType and data are required"
				}
				blocks = append(blocks, modelPart{"type": "image", "source": map[string]string{"type": "base64", "media_type": d.MimeType, "data": d.Data}})
			default:
				return nil, "* GenerateContentRequest.contents.parts: a part must have data"
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
	return messagesBody(model, stream, in.GenerationConfig.MaxOutputTokens, system.String(), msgs, tools, in.GenerationConfig.StopSequences), ""
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
