package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// The structured-output schemas of testdata/anthropic_schema/cases.in.json
// become, for Anthropic, what the official SDK makes of them, byte for byte
// (key order included): cases.sdk.json is transformJSONSchema's output in
// @anthropic-ai/sdk 1.16.0 (lib/transform-json-schema.mjs), written by
//
//	node -e 'import("@anthropic-ai/sdk/lib/transform-json-schema.mjs").then(m =>
//	  console.log(JSON.stringify(require("./cases.in.json").map(c => m.transformJSONSchema(c)))))'
func TestAnthropicSchemaAsTheSDK(t *testing.T) {
	in, err := os.ReadFile("testdata/anthropic_schema/cases.in.json")
	must(t, err)
	want, err := os.ReadFile("testdata/anthropic_schema/cases.sdk.json")
	must(t, err)
	var wants []json.RawMessage
	must(t, json.Unmarshal(want, &wants))
	v, _ := jsonscan.Valid(in)
	n := 0
	for i, schema := range jsonscan.Each(v) {
		got := anthropicSchema(schema)
		if i >= len(wants) || !bytes.Equal(got, wants[i]) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, wants[min(i, len(wants)-1)])
		}
		n++
	}
	if n != len(wants) {
		t.Errorf("%d cases, %d answers", n, len(wants))
	}
}

// A Chat or Responses client's schema reaches an Anthropic target
// normalised, and a Gemini or Bedrock one as it came.
func TestStructuredOutputSchemaForAnthropic(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,` +
		`"schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"string","minLength":1}},"required":["n"]}}}}`)
	out, _, err := ChatToMessages(body, "claude", nil)
	must(t, err)
	want := `"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"string","description":"{minLength: 1}"}},"additionalProperties":false,"required":["n"]}}}`
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("ChatToMessages = %s\nwant it to hold %s", out, want)
	}
	r, err := DecodeRequest(Chat, body)
	must(t, err)
	gem, err := EncodeGemini(r)
	must(t, err)
	if !bytes.Contains(gem, []byte(`"$schema"`)) || !bytes.Contains(gem, []byte(`"minLength":1`)) {
		t.Errorf("EncodeGemini changed the schema: %s", gem)
	}
}
