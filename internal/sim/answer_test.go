package sim

import (
	"encoding/json"
	"reflect"
	"testing"
)

const (
	weatherTool = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city","unit","days"]}}}`
	timeTool    = `{"type":"function","function":{"name":"get_time"}}`
	weatherArgs = `{"city":"example","unit":"celsius","days":1}`
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		parallel bool // the provider's knob
		want     answer
	}{
		{"no tools: text", `{"messages":[{"role":"user","content":"hi"}]}`, false, answer{}},
		{"tools, user turn: a call to the first", `{"tools":[` + weatherTool + `,` + timeTool + `],"messages":[{"role":"user","content":"hi"}]}`, false,
			answer{calls: []toolCall{{"get_weather", weatherArgs}}}},
		{"after a tool result: text", `{"tools":[` + timeTool + `],"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[]},{"role":"tool","tool_call_id":"c","content":"9"}]}`, false, answer{}},
		{"anthropic tool_result turn: text", `{"tools":[{"name":"t","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"9"}]}]}`, false, answer{}},
		{"tool_choice none: text", `{"tools":[` + timeTool + `],"tool_choice":"none","messages":[{"role":"user","content":"hi"}]}`, false, answer{}},
		{"anthropic none: text", `{"tools":[{"name":"t"}],"tool_choice":{"type":"none"},"messages":[{"role":"user","content":"hi"}]}`, false, answer{}},
		{"named, OpenAI", `{"tools":[` + weatherTool + `,` + timeTool + `],"tool_choice":{"type":"function","function":{"name":"get_time"}},"messages":[{"role":"user","content":"hi"}]}`, false,
			answer{calls: []toolCall{{"get_time", "{}"}}}},
		{"named, Anthropic", `{"tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{"required":["q"],"properties":{"q":{"type":"boolean"}}}}],"tool_choice":{"type":"tool","name":"b"},"messages":[{"role":"user","content":"hi"}]}`, false,
			answer{calls: []toolCall{{"b", `{"q":true}`}}}},
		{"marker asks for two", `{"tools":[` + weatherTool + `,` + timeTool + `],"messages":[{"role":"system","content":"sim:parallel"},{"role":"user","content":"hi"}]}`, false,
			answer{calls: []toolCall{{"get_weather", weatherArgs}, {"get_time", "{}"}}}},
		{"marker in an Anthropic system prompt", `{"system":"go sim:parallel","tools":[{"name":"a"},{"name":"b"}],"messages":[{"role":"user","content":"hi"}]}`, false,
			answer{calls: []toolCall{{"a", "{}"}, {"b", "{}"}}}},
		{"knob asks for two", `{"tools":[` + weatherTool + `,` + timeTool + `],"messages":[{"role":"user","content":"hi"}]}`, true,
			answer{calls: []toolCall{{"get_weather", weatherArgs}, {"get_time", "{}"}}}},
		{"two asked, parallel forbidden (OpenAI)", `{"parallel_tool_calls":false,"tools":[` + weatherTool + `,` + timeTool + `],"messages":[{"role":"user","content":"hi"}]}`, true,
			answer{calls: []toolCall{{"get_weather", weatherArgs}}}},
		{"two asked, parallel forbidden (Anthropic)", `{"tool_choice":{"type":"any","disable_parallel_tool_use":true},"tools":[{"name":"a"},{"name":"b"}],"messages":[{"role":"user","content":"hi"}]}`, true,
			answer{calls: []toolCall{{"a", "{}"}}}},
		{"two asked, one tool", `{"tools":[` + timeTool + `],"messages":[{"role":"user","content":"sim:parallel"}]}`, true,
			answer{calls: []toolCall{{"get_time", "{}"}}}},
		{"images counted, nested ones too", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"https://i"}}]},{"role":"user","content":[{"type":"image","source":{}},{"type":"tool_result","content":[{"type":"image"}]}]}]}`, false,
			answer{images: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r request
			if err := json.Unmarshal([]byte(tt.body), &r); err != nil {
				t.Fatal(err)
			}
			if got := plan(&r, tt.parallel); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestExampleArgs(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"array"},"c":{"type":"object"},"d":{"type":["string","null"]}},"required":["c","a","b","d"]}`,
			`{"c":{},"a":1,"b":[],"d":null}`},
		{`{"type":"object","properties":{"q":{"type":"string"}}}`, `{}`},
		{``, `{}`},
		{`{"required":["na\"me"],"properties":{"na\"me":{"type":"string"}}}`, `{"na\"me":"example"}`},
	}
	for _, tt := range tests {
		got := exampleArgs(json.RawMessage(tt.schema))
		if got != tt.want || !json.Valid([]byte(got)) {
			t.Errorf("exampleArgs(%s) = %s, want %s", tt.schema, got, tt.want)
		}
	}
}

func TestArgPieces(t *testing.T) {
	for _, args := range []string{"{}", weatherArgs, `{"é":"ü"}`} {
		p := argPieces(args)
		if p[0]+p[1] != args || p[0] == "" || p[1] == "" {
			t.Errorf("argPieces(%s) = %q", args, p)
		}
	}
}

func TestAnswerText(t *testing.T) {
	if got := (answer{}).text(3); got != "The quick brown" {
		t.Errorf("text without images = %q", got)
	}
	if got := (answer{images: 2}).text(3); got != "I see 2 image(s). The quick" {
		t.Errorf("text with images = %q", got)
	}
	a := answer{calls: []toolCall{{"ab", "{}"}, {"get_weather", weatherArgs}}}
	if a.steps(8) != 4 || a.outputTokens(8) != 1+14 {
		t.Errorf("steps %d, output tokens %d; want 4 and 15", a.steps(8), a.outputTokens(8))
	}
}
